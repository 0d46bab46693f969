//! The protobuf wire format, as much of it as the Perfetto export writes:
//! varints, field tags, length-delimited and packed fields, appended to a
//! `Vec<u8>`. Fields are written in the order the caller gives (the export
//! gives them in field-number order, as protobuf's own serializers do).
//! `int32`/`int64` values are sign-extended to 64 bits (a negative one
//! takes 10 bytes), as protobuf encodes them.

/// Wire type of a varint field.
pub const VARINT: u32 = 0;
/// Wire type of a length-delimited field (bytes, strings, messages, packed
/// repeated scalars).
pub const LEN: u32 = 2;

/// Append `v` as a base-128 varint (7 bits a byte, low bits first).
#[inline]
pub fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// The bytes `put_varint` writes for `v`.
#[inline]
pub fn varint_len(v: u64) -> usize {
    (64 - (v | 1).leading_zeros() as usize).div_ceil(7)
}

/// Append the tag of field `field` with wire type `wire`.
#[inline]
pub fn put_tag(out: &mut Vec<u8>, field: u32, wire: u32) {
    put_varint(out, u64::from((field << 3) | wire));
}

/// The bytes `put_tag` writes for `field`.
#[inline]
pub fn tag_len(field: u32) -> usize {
    varint_len(u64::from(field << 3))
}

/// Append a `uint32`/`uint64`/`bool`/enum field.
#[inline]
pub fn put_uint(out: &mut Vec<u8>, field: u32, v: u64) {
    put_tag(out, field, VARINT);
    put_varint(out, v);
}

/// Append an `int32`/`int64` field (sign-extended, as protobuf encodes it).
#[inline]
pub fn put_int(out: &mut Vec<u8>, field: u32, v: i64) {
    put_uint(out, field, v as u64);
}

/// Append a length-delimited field holding `data` (a string, bytes or an
/// encoded message).
#[inline]
pub fn put_bytes(out: &mut Vec<u8>, field: u32, data: &[u8]) {
    put_tag(out, field, LEN);
    put_varint(out, data.len() as u64);
    out.extend_from_slice(data);
}

/// The bytes `put_bytes` writes for `len` bytes of data in `field`.
#[inline]
pub fn bytes_field_len(field: u32, len: usize) -> usize {
    tag_len(field) + varint_len(len as u64) + len
}

/// Append a packed repeated varint field of `values` (each already as its
/// 64-bit wire value); nothing when `values` is empty, as protobuf omits
/// an empty repeated field.
pub fn put_packed(out: &mut Vec<u8>, field: u32, values: &[u64]) {
    if values.is_empty() {
        return;
    }
    let len: usize = values.iter().map(|&v| varint_len(v)).sum();
    put_tag(out, field, LEN);
    put_varint(out, len as u64);
    for &v in values {
        put_varint(out, v);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_are_base_128_low_bits_first() {
        for (v, bytes) in [
            (0u64, vec![0u8]),
            (1, vec![1]),
            (127, vec![0x7f]),
            (128, vec![0x80, 0x01]),
            (300, vec![0xac, 0x02]),
            (u64::MAX, [vec![0xff; 9], vec![0x01]].concat()),
        ] {
            let mut out = Vec::new();
            put_varint(&mut out, v);
            assert_eq!(out, bytes, "{v}");
            assert_eq!(varint_len(v), bytes.len(), "{v}");
        }
    }

    #[test]
    fn a_negative_int_takes_ten_bytes() {
        let mut out = Vec::new();
        put_int(&mut out, 3, -1);
        assert_eq!(out, [&[0x18u8][..], &[0xff; 9], &[0x01]].concat());
    }

    #[test]
    fn fields_are_tagged_with_number_and_wire_type() {
        let mut out = Vec::new();
        put_uint(&mut out, 1, 5);
        put_bytes(&mut out, 2, b"ab");
        put_uint(&mut out, 30, 1);
        assert_eq!(out, [0x08, 5, 0x12, 2, b'a', b'b', 0xf0, 0x01, 1]);
        assert_eq!(bytes_field_len(2, 2), 4);
        assert_eq!(tag_len(30), 2);
    }

    #[test]
    fn packed_fields_hold_their_byte_length_and_empty_ones_are_omitted() {
        let mut out = Vec::new();
        put_packed(&mut out, 1, &[]);
        assert!(out.is_empty());
        put_packed(&mut out, 1, &[1, 300]);
        assert_eq!(out, [0x0a, 3, 1, 0xac, 0x02]);
    }
}
