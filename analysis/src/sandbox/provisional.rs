//! Stand-ins until the generator emits the Functions tables.

use super::{Global, GlobalKind, LuaType, Member};
use crate::target::ReleaseSet;

pub static FUNCTION_GLOBALS: &[Global] = super::table::GLOBALS;

const fn member(name: &'static str, ty: LuaType) -> Member {
    Member {
        name,
        ty,
        releases: ReleaseSet::ALL,
    }
}

pub static LOAD_GLOBALS: &[Global] = &[Global {
    name: "redis",
    kind: GlobalKind::Library(&[
        member("LOG_DEBUG", LuaType::Number),
        member("LOG_NOTICE", LuaType::Number),
        member("LOG_VERBOSE", LuaType::Number),
        member("LOG_WARNING", LuaType::Number),
        member("REDIS_VERSION", LuaType::String),
        member("REDIS_VERSION_NUM", LuaType::Number),
        member("log", LuaType::Function),
        member("register_function", LuaType::Function),
    ]),
    releases: ReleaseSet::ALL,
}];
