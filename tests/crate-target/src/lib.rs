//! Compile-fail tests only; see `ui.rs`.
