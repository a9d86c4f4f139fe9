//! The key bytes sort exactly like the values, over many values of every type.

use super::*;
use wasmod_abi::{AlgebraicType as T, ConnectionId, Field, Identity, Timestamp, Typespace, Value};

/// A small deterministic generator (xorshift), so failures reproduce.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// A random integer, often one at an edge: 0, 1, -1, the extremes.
    fn int(&mut self) -> u128 {
        let edges = [0, 1, u128::MAX, u128::MAX >> 1, 1 << 127, 0x80, 0x7f, 0xff];
        match self.below(3) {
            0 => edges[self.below(edges.len())],
            1 => u128::from(self.next() % 300),
            _ => u128::from(self.next()) << 64 | u128::from(self.next()),
        }
    }

    /// A random float's bits, often a special one.
    fn float(&mut self) -> f64 {
        let specials = [
            0.0,
            -0.0,
            1.0,
            -1.0,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            -f64::NAN,
            f64::from_bits(0x7ff0_0000_0000_0001),
            f64::from_bits(0xfff8_0000_0000_0001),
            f64::MIN_POSITIVE,
            -f64::MIN_POSITIVE,
            f64::from_bits(1),
            f64::from_bits(0x8000_0000_0000_0001),
            f64::MAX,
            f64::MIN,
        ];
        match self.below(3) {
            0 => specials[self.below(specials.len())],
            1 => (self.next() % 100) as f64 - 50.0,
            _ => f64::from_bits(self.next()),
        }
    }

    /// A short string over an alphabet with NUL, control, ASCII and multi-byte characters, so
    /// that prefixes and escapes are frequent.
    fn string(&mut self) -> String {
        let alphabet = ['\0', '\u{1}', 'a', 'b', 'é', '\u{ffff}', '\u{10ffff}'];
        (0..self.below(5))
            .map(|_| alphabet[self.below(alphabet.len())])
            .collect()
    }

    fn bytes<const N: usize>(&mut self) -> [u8; N] {
        let choices = [0x00, 0x01, 0x7f, 0x80, 0xff];
        std::array::from_fn(|_| {
            if self.below(4) == 0 {
                choices[self.below(choices.len())]
            } else {
                0
            }
        })
    }

    /// A random value of type `ty`.
    fn value(&mut self, ty: &T) -> Value {
        let n = self.int();
        match ty {
            T::Bool => Value::Bool(n % 2 == 1),
            T::I8 => Value::I8(n as i8),
            T::U8 => Value::U8(n as u8),
            T::I16 => Value::I16(n as i16),
            T::U16 => Value::U16(n as u16),
            T::I32 => Value::I32(n as i32),
            T::U32 => Value::U32(n as u32),
            T::I64 => Value::I64(n as i64),
            T::U64 => Value::U64(n as u64),
            T::I128 => Value::I128(n as i128),
            T::U128 => Value::U128(n),
            T::F32 => Value::F32(self.float() as f32),
            T::F64 => Value::F64(self.float()),
            T::String => Value::String(self.string()),
            T::Identity => Value::Identity(Identity::from_bytes(self.bytes())),
            T::ConnectionId => Value::ConnectionId(ConnectionId::from_bytes(self.bytes())),
            T::Timestamp => Value::Timestamp(Timestamp::from_micros_since_unix_epoch(n as i64)),
            T::Array(element) => {
                Value::Array((0..self.below(4)).map(|_| self.value(element)).collect())
            }
            T::FixedArray(element, len) => {
                Value::Product((0..*len).map(|_| self.value(element)).collect())
            }
            T::Option(inner) => {
                Value::Option((self.below(3) > 0).then(|| Box::new(self.value(inner))))
            }
            T::Result(ok, err) => Value::Result(if self.below(2) == 0 {
                Ok(Box::new(self.value(ok)))
            } else {
                Err(Box::new(self.value(err)))
            }),
            T::Product(fields) => {
                Value::Product(fields.iter().map(|field| self.value(&field.ty)).collect())
            }
            T::Sum(variants) => {
                let tag = self.below(variants.len());
                Value::Sum {
                    tag: tag as u8,
                    value: Box::new(self.value(&variants[tag].ty)),
                }
            }
            T::Ref(_) => unreachable!("the tests use no references"),
        }
    }
}

/// The key bytes of `value`, of type `ty`, built from its encoding as a row would be.
fn key_of(ty: &T, value: &Value, key: &mut Key) {
    let typespace = Typespace::default();
    let bytes = value.to_bytes();
    push_encoded(Shape::of(ty, &typespace), ty, &typespace, &bytes, key);
}

fn key(ty: &T, value: &Value) -> Key {
    let mut key = Key::new();
    key_of(ty, value, &mut key);
    key
}

/// Every type the tests cover: each primitive, and compounds of them.
fn types() -> Vec<T> {
    let unit = T::Product(Vec::new());
    let primitives = [
        T::Bool,
        T::I8,
        T::U8,
        T::I16,
        T::U16,
        T::I32,
        T::U32,
        T::I64,
        T::U64,
        T::I128,
        T::U128,
        T::F32,
        T::F64,
        T::String,
        T::Identity,
        T::ConnectionId,
        T::Timestamp,
    ];
    let compounds = [
        T::Array(Box::new(T::String)),
        T::Array(Box::new(T::I8)),
        T::Array(Box::new(unit.clone())),
        T::Array(Box::new(T::Option(Box::new(T::String)))),
        T::FixedArray(Box::new(T::Bool), 3),
        T::Option(Box::new(T::I32)),
        T::Result(Box::new(T::U8), Box::new(T::String)),
        T::Product(vec![
            Field::named("a", T::I16),
            Field::named("b", T::String),
            Field::named("c", T::F32),
        ]),
        T::Sum(vec![
            Field::named("none", unit),
            Field::named("number", T::U32),
            Field::named("text", T::String),
        ]),
    ];
    primitives.into_iter().chain(compounds).collect()
}

/// Compares every pair of `values` both ways.
fn assert_same_order(label: &str, values: &[(Vec<Value>, Key)]) {
    for (a, key_a) in values {
        for (b, key_b) in values {
            assert_eq!(
                key_a.cmp(key_b),
                a.cmp(b),
                "{label}: {a:?} ({key_a:?}) against {b:?} ({key_b:?})"
            );
        }
    }
}

#[test]
fn key_bytes_sort_like_values_of_every_type() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for ty in types() {
        let values: Vec<_> = (0..120)
            .map(|_| {
                let value = rng.value(&ty);
                let key = key(&ty, &value);
                (vec![value], key)
            })
            .collect();
        assert_same_order(&format!("{ty:?}"), &values);
    }
}

#[test]
fn multi_column_keys_sort_like_tuples() {
    let mut rng = Rng(0x0123_4567_89ab_cdef);
    let columns = [
        [T::String, T::I32],
        [T::I32, T::String],
        [T::Array(Box::new(T::U8)), T::Bool],
        [T::F64, T::Option(Box::new(T::String))],
    ];
    for tys in columns {
        let values: Vec<_> = (0..150)
            .map(|_| {
                let mut key = Key::new();
                let values: Vec<Value> = tys.iter().map(|ty| rng.value(ty)).collect();
                for (ty, value) in tys.iter().zip(&values) {
                    key_of(ty, value, &mut key);
                }
                (values, key)
            })
            .collect();
        assert_same_order(&format!("{tys:?}"), &values);
    }
}

#[test]
fn the_edges_sort_as_values_define_them() {
    let f64s = [
        -f64::NAN,
        f64::NEG_INFINITY,
        -1.0,
        -0.0,
        0.0,
        f64::MIN_POSITIVE,
        f64::INFINITY,
        f64::NAN,
    ];
    let keys: Vec<Key> = f64s.iter().map(|&x| key(&T::F64, &Value::F64(x))).collect();
    assert!(keys.windows(2).all(|pair| pair[0] < pair[1]), "{keys:?}");
    let i32s = [i32::MIN, -1, 0, 1, i32::MAX];
    let keys: Vec<Key> = i32s.iter().map(|&x| key(&T::I32, &Value::I32(x))).collect();
    assert!(keys.windows(2).all(|pair| pair[0] < pair[1]), "{keys:?}");
    let strings = ["", "\0", "\0\0", "\0a", "a", "a\0", "a\u{1}", "ab", "b"];
    let keys: Vec<Key> = strings
        .iter()
        .map(|&s| key(&T::String, &Value::from(s)))
        .collect();
    assert!(keys.windows(2).all(|pair| pair[0] < pair[1]), "{keys:?}");
}

#[test]
fn keys_compare_like_their_bytes_inline_or_not() {
    let mut rng = Rng(42);
    let choices = [0x00, 0x01, 0xfe, 0xff];
    let keys: Vec<Key> = (0..300)
        .map(|_| {
            let len = rng.below(2 * INLINE);
            let bytes: Vec<u8> = (0..len).map(|_| choices[rng.below(4)]).collect();
            Key::from_slice(&bytes)
        })
        .collect();
    for a in &keys {
        for b in &keys {
            assert_eq!(a.cmp(b), a.as_bytes().cmp(b.as_bytes()), "{a:?} {b:?}");
            assert_eq!(a == b, a.as_bytes() == b.as_bytes());
        }
    }
}

#[test]
fn the_successor_follows_every_extension() {
    let mut rng = Rng(7);
    let choices = [0x00, 0x01, 0xfe, 0xff];
    for _ in 0..500 {
        let len = rng.below(INLINE + 8);
        let bytes: Vec<u8> = (0..len).map(|_| choices[rng.below(4)]).collect();
        let key = Key::from_slice(&bytes);
        let mut longer = bytes.clone();
        longer.extend((0..rng.below(4)).map(|_| choices[rng.below(4)]));
        let longer = Key::from_slice(&longer);
        match key.successor() {
            Some(next) => assert!(key <= longer && longer < next, "{key:?} {next:?}"),
            None => assert!(bytes.iter().all(|&byte| byte == 0xff)),
        }
    }
    assert_eq!(Key::new().successor(), None);
    assert_eq!(
        Key::from_slice(&[1, 0xff]).successor(),
        Some(Key::from_slice(&[2]))
    );
}

#[test]
fn fixed_words_are_the_key_bytes() {
    let mut rng = Rng(0x5eed);
    let typespace = Typespace::default();
    let fixed = types().into_iter().filter(|ty| {
        Shape::of(ty, &typespace)
            .width()
            .is_some_and(|width| width <= 16)
    });
    for ty in fixed {
        let shape = Shape::of(&ty, &typespace);
        for _ in 0..200 {
            let value = rng.value(&ty);
            let key = key(&ty, &value);
            let mut expected = [0; 16];
            expected[16 - key.as_bytes().len()..].copy_from_slice(key.as_bytes());
            assert_eq!(
                fixed_word(shape, &value.to_bytes()),
                u128::from_be_bytes(expected),
                "{ty:?} {value:?}"
            );
        }
    }
}
