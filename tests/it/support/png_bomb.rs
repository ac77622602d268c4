//! PNG files of all-zero RGBA pixels, written without ever holding the pixels: the
//! deflate stream is a zero literal followed by back-references of 258 bytes at distance
//! 1 (fixed Huffman codes, 13 bits each), so a 10,000×10,000 image (400 MB of pixels)
//! is a file of about 2.5 MB — a decompression bomb.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

/// Bits written least significant first, as deflate wants.
struct Bits {
    out: Vec<u8>,
    acc: u64,
    count: u32,
}

impl Bits {
    fn new() -> Self {
        Self {
            out: Vec::new(),
            acc: 0,
            count: 0,
        }
    }

    /// Writes the low `n` bits of `value`, least significant first.
    fn put(&mut self, value: u32, n: u32) {
        self.acc |= u64::from(value) << self.count;
        self.count += n;
        while self.count >= 8 {
            self.out.push(self.acc as u8);
            self.acc >>= 8;
            self.count -= 8;
        }
    }

    /// Writes a Huffman code of `n` bits, most significant first.
    fn code(&mut self, code: u32, n: u32) {
        let reversed = code.reverse_bits() >> (32 - n);
        self.put(reversed, n);
    }

    fn finish(mut self) -> Vec<u8> {
        if self.count > 0 {
            self.out.push(self.acc as u8);
        }
        self.out
    }
}

/// A zlib stream of `n` zero bytes.
fn zlib_zeros(n: u64) -> Vec<u8> {
    let mut bits = Bits::new();
    bits.put(1, 1); // the last block
    bits.put(1, 2); // fixed Huffman codes
    let literal_zero = |bits: &mut Bits| bits.code(0x30, 8);
    let mut left = n;
    if left > 0 {
        literal_zero(&mut bits);
        left -= 1;
    }
    while left >= 258 {
        bits.code(0xc5, 8); // length code 285: 258 bytes
        bits.code(0, 5); // distance code 0: distance 1
        left -= 258;
    }
    for _ in 0..left {
        literal_zero(&mut bits);
    }
    bits.code(0, 7); // end of block
    let mut out = vec![0x78, 0x01];
    out.extend(bits.finish());
    let adler = (((n % 65521) as u32) << 16) | 1;
    out.extend(adler.to_be_bytes());
    out
}

fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = 0xffff_ffffu32;
    for &b in bytes {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0xedb8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

fn chunk(out: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
    out.extend(u32::try_from(data.len()).unwrap().to_be_bytes());
    let mut body = kind.to_vec();
    body.extend_from_slice(data);
    out.extend(&body);
    out.extend(crc32(&body).to_be_bytes());
}

/// A valid PNG of `width`×`height` transparent black RGBA pixels (8 bits each).
pub fn zero_png(width: u32, height: u32) -> Vec<u8> {
    let mut out = b"\x89PNG\r\n\x1a\n".to_vec();
    let mut header = Vec::new();
    header.extend(width.to_be_bytes());
    header.extend(height.to_be_bytes());
    header.extend([8, 6, 0, 0, 0]); // 8 bits, RGBA, deflate, no filter choice, no interlace
    chunk(&mut out, b"IHDR", &header);
    // Each row: its filter byte (0, none) and its pixels, all zero.
    let raw = u64::from(height) * (1 + u64::from(width) * 4);
    chunk(&mut out, b"IDAT", &zlib_zeros(raw));
    chunk(&mut out, b"IEND", &[]);
    out
}

#[test]
fn a_small_zero_png_decodes_to_its_pixels() {
    let png = zero_png(300, 200);
    let image = image::load_from_memory(&png).unwrap().to_rgba8();
    assert_eq!(image.dimensions(), (300, 200));
    assert!(image.pixels().all(|p| p.0 == [0, 0, 0, 0]));
}
