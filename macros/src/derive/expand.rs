//! The derives' generated code, one module each. It names the runtime only
//! through [`crate::private`].

pub mod json_shape;
pub mod reply;
pub mod script_error;
