//! Typed, compile-time-checked Redis Lua scripts.
