//! Deserializing a part of a JSON tree while noting where the first error arose: the path
//! (keys and indices) of the deepest node whose reading failed.
//!
//! A wrapping path tracker (serde_path_to_error) sits on top of serde_json's own tree
//! deserializer, so every type's visitors are compiled for both layers; this is that
//! deserializer with the tracking built in, one layer. Errors are serde_json's own, with the
//! same text. As with the wrapper, the path stops at an object read through a buffer
//! (internally tagged and untagged enums, flattened fields) and at an externally tagged enum.

use serde::de::value::BorrowedStrDeserializer;
use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Unexpected, Visitor};
use serde_json::{Error, Value};
use std::cell::RefCell;

/// One step of a path into the tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seg {
    /// An object's field.
    Key(String),
    /// An array's element.
    Index(usize),
}

impl Seg {
    /// The step to `key`: not inlined, as it is called from every type's copy of the map
    /// reader (see [`Track::step`]).
    #[inline(never)]
    fn key(key: &str) -> Self {
        Seg::Key(key.to_owned())
    }
}

/// Deserializes `value` as a `T`; on failure, the path (from `value`) where the first
/// error arose, and the error.
pub fn deserialize<'de, T: de::Deserialize<'de>>(
    value: &'de Value,
) -> Result<T, (Vec<Seg>, Error)> {
    let track = Track::default();
    T::deserialize(Node {
        value,
        track: &track,
    })
    .map_err(|e| (track.failed_at.into_inner().unwrap_or_default(), e))
}

/// Deserializes `value` as a `T`, without the path: for the engine's other readers of JSON
/// trees, which so share this deserializer's code in the wasm instead of compiling every
/// type's visitors once more for serde_json's own tree deserializer.
pub fn read<'de, T: de::Deserialize<'de>>(value: &'de Value) -> Result<T, Error> {
    deserialize(value).map_err(|(_, e)| e)
}

#[derive(Default)]
struct Track {
    /// Where reading is now.
    path: RefCell<Vec<Seg>>,
    /// Where the first error arose: an inner node's error reaches it before its parents'.
    failed_at: RefCell<Option<Vec<Seg>>>,
}

impl Track {
    /// Reads `seed` from `value`, one step (`seg`) deeper; an error there is noted.
    ///
    /// One copy of this is compiled for each type read (a few hundred): the bookkeeping is
    /// in [`Self::enter`] and [`Self::leave`], compiled once, so that each copy only calls them.
    fn step<'de, S: DeserializeSeed<'de>>(
        &self,
        seg: Seg,
        seed: S,
        read: impl FnOnce(S) -> Result<S::Value, Error>,
    ) -> Result<S::Value, Error> {
        self.enter(seg);
        let result = read(seed);
        self.leave(result.is_err());
        result
    }

    /// Goes one step (`seg`) deeper.
    #[inline(never)]
    fn enter(&self, seg: Seg) {
        self.path.borrow_mut().push(seg);
    }

    /// Comes back up from the step [`Self::enter`] took; `failed` when reading there failed.
    #[inline(never)]
    fn leave(&self, failed: bool) {
        if failed {
            let mut at = self.failed_at.borrow_mut();
            if at.is_none() {
                *at = Some(self.path.borrow().clone());
            }
        }
        self.path.borrow_mut().pop();
    }
}

#[derive(Clone, Copy)]
struct Node<'de, 't> {
    value: &'de Value,
    track: &'t Track,
}

impl<'de, 't> Node<'de, 't> {
    fn invalid_type(&self, expected: &dyn de::Expected) -> Error {
        let unexpected = match self.value {
            Value::Null => Unexpected::Unit,
            Value::Bool(b) => Unexpected::Bool(*b),
            Value::Number(n) => match (n.as_u64(), n.as_i64(), n.as_f64()) {
                (Some(u), _, _) => Unexpected::Unsigned(u),
                (None, Some(i), _) => Unexpected::Signed(i),
                (None, None, f) => Unexpected::Float(f.unwrap_or(f64::NAN)),
            },
            Value::String(s) => Unexpected::Str(s),
            Value::Array(_) => Unexpected::Seq,
            Value::Object(_) => Unexpected::Map,
        };
        de::Error::invalid_type(unexpected, expected)
    }

    fn visit_array<V: Visitor<'de>>(
        self,
        array: &'de [Value],
        visitor: V,
    ) -> Result<V::Value, Error> {
        let mut seq = Seq {
            iter: array.iter(),
            index: 0,
            track: self.track,
        };
        let out = visitor.visit_seq(&mut seq)?;
        if seq.iter.len() == 0 {
            Ok(out)
        } else {
            Err(de::Error::invalid_length(
                array.len(),
                &"fewer elements in array",
            ))
        }
    }

    fn visit_object<V: Visitor<'de>>(
        self,
        object: &'de serde_json::Map<String, Value>,
        visitor: V,
    ) -> Result<V::Value, Error> {
        let mut map = Object {
            iter: object.iter(),
            value: None,
            track: self.track,
        };
        let out = visitor.visit_map(&mut map)?;
        if map.iter.len() == 0 {
            Ok(out)
        } else {
            Err(de::Error::invalid_length(
                object.len(),
                &"fewer elements in map",
            ))
        }
    }
}

/// Scalars: serde_json reads them (no nesting, nothing to track).
macro_rules! scalar {
    ($($method:ident)*) => {$(
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
            self.value.$method(visitor)
        }
    )*};
}

impl<'de> de::Deserializer<'de> for Node<'de, '_> {
    type Error = Error;

    scalar!(deserialize_bool deserialize_i8 deserialize_i16 deserialize_i32 deserialize_i64
        deserialize_i128 deserialize_u8 deserialize_u16 deserialize_u32 deserialize_u64
        deserialize_u128 deserialize_f32 deserialize_f64 deserialize_char deserialize_str
        deserialize_string deserialize_identifier deserialize_unit);

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.value {
            Value::Null => visitor.visit_unit(),
            Value::Bool(b) => visitor.visit_bool(*b),
            Value::Number(n) => n.deserialize_any(visitor),
            Value::String(s) => visitor.visit_borrowed_str(s),
            Value::Array(a) => self.visit_array(a, visitor),
            Value::Object(o) => self.visit_object(o, visitor),
        }
    }

    fn deserialize_bytes<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.value {
            Value::String(s) => visitor.visit_borrowed_str(s),
            Value::Array(a) => self.visit_array(a, visitor),
            _ => Err(self.invalid_type(&visitor)),
        }
    }

    fn deserialize_byte_buf<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_bytes(visitor)
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.value {
            Value::Null => visitor.visit_none(),
            _ => visitor.visit_some(self),
        }
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.value.deserialize_unit(visitor)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.value {
            Value::Array(a) => self.visit_array(a, visitor),
            _ => Err(self.invalid_type(&visitor)),
        }
    }

    fn deserialize_tuple<V: Visitor<'de>>(
        self,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.value {
            Value::Object(o) => self.visit_object(o, visitor),
            _ => Err(self.invalid_type(&visitor)),
        }
    }

    /// Objects only: serde_json would also read a struct from an array in field order, which
    /// a scenario has no use for, and that path is compiled into every struct's visitor.
    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        match self.value {
            Value::Object(o) => self.visit_object(o, visitor),
            _ => Err(self.invalid_type(&visitor)),
        }
    }

    /// serde_json reads it: the path stops at an externally tagged enum.
    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.value.deserialize_enum(name, variants, visitor)
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_unit()
    }
}

struct Seq<'de, 't> {
    iter: std::slice::Iter<'de, Value>,
    index: usize,
    track: &'t Track,
}

impl<'de> SeqAccess<'de> for Seq<'de, '_> {
    type Error = Error;

    fn next_element_seed<S: DeserializeSeed<'de>>(
        &mut self,
        seed: S,
    ) -> Result<Option<S::Value>, Error> {
        let Some(value) = self.iter.next() else {
            return Ok(None);
        };
        let track = self.track;
        let index = self.index;
        self.index += 1;
        track
            .step(Seg::Index(index), seed, |seed| {
                seed.deserialize(Node { value, track })
            })
            .map(Some)
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.iter.len())
    }
}

struct Object<'de, 't> {
    iter: serde_json::map::Iter<'de>,
    /// The entry whose key was read last.
    value: Option<(&'de String, &'de Value)>,
    track: &'t Track,
}

impl<'de> MapAccess<'de> for Object<'de, '_> {
    type Error = Error;

    fn next_key_seed<S: DeserializeSeed<'de>>(
        &mut self,
        seed: S,
    ) -> Result<Option<S::Value>, Error> {
        let Some((key, value)) = self.iter.next() else {
            return Ok(None);
        };
        self.value = Some((key, value));
        self.track
            .step(Seg::key(key), seed, |seed| {
                seed.deserialize(BorrowedStrDeserializer::new(key))
            })
            .map(Some)
    }

    fn next_value_seed<S: DeserializeSeed<'de>>(&mut self, seed: S) -> Result<S::Value, Error> {
        let Some((key, value)) = self.value.take() else {
            return Err(de::Error::custom("value is missing"));
        };
        let track = self.track;
        track.step(Seg::key(key), seed, |seed| {
            seed.deserialize(Node { value, track })
        })
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.iter.len())
    }
}
