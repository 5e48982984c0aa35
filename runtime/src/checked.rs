//! The library's own compile errors for declared types that cannot be sent
//! or decoded.
//!
//! Generated code asks for the redis-rs trait a type needs through
//! `Probe::<T>::new().checked()`. Method resolution tries the receiver by
//! value first, where [`Encodable`]/[`Decodable`] apply when the type has
//! the trait; only otherwise does it take the reference, where the
//! `Unencodable*`/[`Undecodable`] stand-ins apply. Their methods carry a
//! bound no type satisfies, whose `on_unimplemented` message is the
//! library's, spanned on the declared type. The stand-ins return values on
//! which the rest of the generated code type-checks, so a mistake is
//! reported once, not again by every use of the type.

use std::marker::PhantomData;
use std::vec::IntoIter;

use redis::{FromRedisValue, ParsingError, ToRedisArgs, Value};

use crate::call::Call;
use crate::shape::{ReplyShape, Shape};

/// Asks for the trait `T` needs; see the module documentation.
#[derive(Debug)]
pub struct Probe<T>(PhantomData<T>);

impl<T> Probe<T> {
    /// A probe for `T`.
    #[allow(clippy::new_without_default)]
    pub const fn new() -> Self {
        Self(PhantomData)
    }

    /// A probe for the type of `value`.
    pub const fn of(_value: &T) -> Self {
        Self(PhantomData)
    }
}

/// The reply type of a script, or a field of a derived reply.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be decoded from a script's reply",
    label = "`{Self}` does not implement `redis::FromRedisValue`",
    note = "for a struct or an enum of your own, add `#[derive(redis_script::ScriptReply)]`; for another type, decode into one that implements `redis::FromRedisValue` (`i64`, `String`, `Option<T>`, `Vec<T>`, tuples, …)"
)]
pub trait ReplyType {}

/// The reply type of a script that returns `cjson.encode(…)`: the same
/// bound as [`ReplyType`], whose refusal names [`Json`](crate::Json).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be decoded from a script's reply",
    label = "the script replies with JSON text (`cjson.encode`), which `{Self}` does not decode",
    note = "declare the reply `Json<{Self}>` (`redis_script::Json`), which decodes the text with serde_json into a `{Self}` that derives `serde::Deserialize`; derive `redis_script::JsonShape` as well, and the table the script encodes is checked against `{Self}` at build time"
)]
pub trait JsonReplyType {}

/// A key parameter.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be sent as a key",
    label = "`{Self}` does not implement `redis::ToRedisArgs`",
    note = "a key parameter takes a type that implements `redis::ToRedisArgs`: `&str`, `String`, `&[u8]`, or a slice of them for the remaining KEYS"
)]
pub trait KeyType {}

/// An argument parameter.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be sent as a script argument",
    label = "`{Self}` does not implement `redis::ToRedisArgs`",
    note = "an argument parameter takes a type that implements `redis::ToRedisArgs` (`&str`, `String`, integers, floats, `&[u8]`, …): implement it for your type, or pass one of those"
)]
pub trait ArgumentType {}

/// The connection a generated function takes, as `&mut (dyn
/// AsyncConnection + Send)`: any async redis-rs connection of the version
/// this crate depends on (`MultiplexedConnection`, `ConnectionManager`, the
/// async cluster connection, a pooled one with `&mut *pooled`). Every
/// `redis::aio::ConnectionLike` is one; nothing else is.
///
/// A trait object rather than a type parameter, so that passing something
/// else (a `redis::Client`, a connection of another redis-rs version) is one
/// error at the argument, in the library's words. A function generic over
/// its connection therefore bounds it `Send` (and leaves it sized) to pass
/// it on:
///
/// ```
/// use redis_script::redis::aio::ConnectionLike;
/// use redis_script::redis_script;
///
/// #[redis_script(path = "../lua/release_lock.lua", keys = 1)]
/// async fn release_lock(lock: &str, token: &str) -> i64;
///
/// async fn release<C: ConnectionLike + Send>(
///     connection: &mut C,
///     token: &str,
/// ) -> Result<bool, redis_script::Error> {
///     Ok(release_lock(connection, "lock:{order-7}", token).await? == 1)
/// }
/// ```
///
/// A connection held as `dyn ConnectionLike`, which cannot become this
/// trait object, takes the prepared call instead:
/// `release_lock::call(lock, token).invoke(connection)`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not an async connection of redis-rs 1.x, the version redis-script takes",
    label = "not a `redis_script::redis::aio::ConnectionLike`",
    note = "when this is a connection of another redis-rs version (`redis = \"0.32\"` in Cargo.toml), depend on `redis = \"1\"`, or open the connection through `redis_script::redis`, the version this crate re-exports",
    note = "for a pooled connection, pass the connection itself: `&mut *pooled`",
    note = "a `redis::Client` is no connection but opens them: pass `&mut client.get_multiplexed_async_connection().await?`, or a `ConnectionManager` or cluster connection you keep",
    note = "a blocking `redis::Connection` is no async connection: call the script through its prepared call instead, `script_name::call(arguments…).invoke_blocking(&mut connection)`"
)]
pub trait AsyncConnection: redis::aio::ConnectionLike {}

// Not looked through: a connection that is not `ConnectionLike` is
// reported as not an `AsyncConnection`, in the message above.
#[diagnostic::do_not_recommend]
impl<C: redis::aio::ConnectionLike + ?Sized> AsyncConnection for C {}

/// `T` decodes: the real operations.
pub trait Decodable<T> {
    /// Proof that `T` decodes.
    fn checked(self) -> Decodes<T>;

    /// [`Self::checked`], for a reply type the contract assertions already
    /// require to be a [`ReplyShape`].
    fn checked_by_shape(self) -> Decodes<T>;

    /// [`Self::checked`], for a script that replies with JSON text.
    fn checked_json(self) -> Decodes<T>;
}

impl<T: FromRedisValue> Decodable<T> for Probe<T> {
    #[inline(always)]
    fn checked(self) -> Decodes<T> {
        Decodes(PhantomData)
    }

    #[inline(always)]
    fn checked_by_shape(self) -> Decodes<T> {
        Decodes(PhantomData)
    }

    #[inline(always)]
    fn checked_json(self) -> Decodes<T> {
        Decodes(PhantomData)
    }
}

/// `T` does not decode: the library's error.
pub trait Undecodable<T> {
    /// Reports that `T` does not decode.
    fn checked(&self) -> DoesNotDecode<T>
    where
        T: ReplyType;

    /// Reports nothing: `ReplyShape` has `FromRedisValue` as a supertrait,
    /// so the contract's `T: ReplyShape` is the one error, and the fix
    /// (`#[derive(ScriptReply)]`) is not given twice.
    fn checked_by_shape(&self) -> DoesNotDecode<T>;

    /// Reports that `T` does not decode, naming `Json<T>`.
    fn checked_json(&self) -> DoesNotDecode<T>
    where
        T: JsonReplyType;
}

impl<T> Undecodable<T> for Probe<T> {
    fn checked(&self) -> DoesNotDecode<T>
    where
        T: ReplyType,
    {
        DoesNotDecode(PhantomData)
    }

    fn checked_by_shape(&self) -> DoesNotDecode<T> {
        DoesNotDecode(PhantomData)
    }

    fn checked_json(&self) -> DoesNotDecode<T>
    where
        T: JsonReplyType,
    {
        DoesNotDecode(PhantomData)
    }
}

/// Proof that `T` implements `FromRedisValue`.
#[derive(Debug)]
pub struct Decodes<T>(PhantomData<T>);

impl<T: FromRedisValue> Decodes<T> {
    /// The call, with its decoding methods.
    #[inline(always)]
    pub fn call<E>(self, call: Call<T, E>) -> Call<T, E> {
        call
    }

    /// [`crate::decode::reply_element`] for `T`.
    #[inline(always)]
    pub fn element(
        self,
        items: &[Value],
        index: usize,
        position: usize,
        expected: &'static str,
        field: &'static str,
    ) -> Result<T, ParsingError> {
        crate::decode::reply_element(items, index, position, expected, field)
    }

    /// [`crate::decode::reply_next`] for `T`.
    #[inline(always)]
    pub fn next(
        self,
        items: &mut IntoIter<Value>,
        position: usize,
        expected: &'static str,
        field: &'static str,
    ) -> Result<T, ParsingError> {
        crate::decode::reply_next(items, position, expected, field)
    }
}

/// Stands in for [`Decodes`] once the error is reported; never built by
/// code that compiles.
#[derive(Debug)]
pub struct DoesNotDecode<T>(PhantomData<T>);

impl<T> DoesNotDecode<T> {
    /// Stands in for [`Decodes::call`].
    pub fn call<E>(self, _call: Call<T, E>) -> UndecodedCall<T, E> {
        UndecodedCall(PhantomData)
    }

    /// Stands in for [`Decodes::element`].
    pub fn element(
        self,
        _items: &[Value],
        _index: usize,
        _position: usize,
        _expected: &'static str,
        _field: &'static str,
    ) -> Result<T, ParsingError> {
        Err(UNDECODABLE.to_string().into())
    }

    /// Stands in for [`Decodes::next`].
    pub fn next(
        self,
        _items: &mut IntoIter<Value>,
        _position: usize,
        _expected: &'static str,
        _field: &'static str,
    ) -> Result<T, ParsingError> {
        Err(UNDECODABLE.to_string().into())
    }
}

const UNDECODABLE: &str = "the field's type does not implement `FromRedisValue`";

/// Stands in for a [`Call`] whose reply type does not decode.
#[derive(Debug)]
pub struct UndecodedCall<T, E>(PhantomData<(T, E)>);

impl<T, E> UndecodedCall<T, E> {
    /// Stands in for [`Call::invoke`].
    pub async fn invoke<C: ?Sized>(&self, _connection: &mut C) -> Result<T, E> {
        std::future::pending().await
    }
}

/// `T` encodes: the value itself.
pub trait Encodable<'a, T> {
    /// The key, unchanged.
    fn key(self, value: &'a T) -> &'a T;
    /// The argument, unchanged.
    fn argument(self, value: &'a T) -> &'a T;
}

impl<'a, T: ToRedisArgs> Encodable<'a, T> for Probe<T> {
    #[inline(always)]
    fn key(self, value: &'a T) -> &'a T {
        value
    }

    #[inline(always)]
    fn argument(self, value: &'a T) -> &'a T {
        value
    }
}

/// `T` does not encode: the library's error.
pub trait Unencodable<T> {
    /// Reports that the key type does not encode.
    fn key(&self, value: &T) -> &'static NotEncoded
    where
        T: KeyType;

    /// Reports that the argument type does not encode.
    fn argument(&self, value: &T) -> &'static NotEncoded
    where
        T: ArgumentType;
}

impl<T> Unencodable<T> for Probe<T> {
    fn key(&self, _value: &T) -> &'static NotEncoded
    where
        T: KeyType,
    {
        &NotEncoded
    }

    fn argument(&self, _value: &T) -> &'static NotEncoded
    where
        T: ArgumentType,
    {
        &NotEncoded
    }
}

/// Stands in for a value that does not encode once the error is reported.
#[derive(Debug)]
pub struct NotEncoded;

impl ToRedisArgs for NotEncoded {
    fn write_redis_args<W: ?Sized + redis::RedisWrite>(&self, _out: &mut W) {}
}

/// The reply type describes its shape: telemetry can name the tag of a
/// tagged reply.
pub trait KnownShape<T> {
    /// Gives `call` the shape of `T`.
    fn attach_shape<E>(self, call: &mut Call<T, E>);
}

impl<T: ReplyShape> KnownShape<T> for Probe<T> {
    #[inline(always)]
    fn attach_shape<E>(self, call: &mut Call<T, E>) {
        crate::call::set_reply_shape(call, shape_of::<T>);
    }
}

/// The reply type does not describe its shape (or is generic): nothing to
/// attach.
pub trait UnknownShape<T> {
    /// Leaves `call` as it is.
    fn attach_shape<E>(&self, call: &mut Call<T, E>);
}

impl<T> UnknownShape<T> for Probe<T> {
    #[inline(always)]
    fn attach_shape<E>(&self, _call: &mut Call<T, E>) {}
}

fn shape_of<T: ReplyShape>() -> Shape {
    T::SHAPE
}
