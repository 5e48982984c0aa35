//! The derives' generated code, one module each. It names the runtime only
//! through [`crate::private`].

pub mod reply;
pub mod script_error;
