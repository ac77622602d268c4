//! Image files as the models get them: recognised by their bytes (PNG, JPEG, GIF, WebP),
//! checked, and scaled down when they are larger than the APIs accept.
//!
//! Only the header is read to learn the size; the pixels are decoded only when the image
//! must be scaled (larger than [`MAX_SIDE`] on a side, or more than [`MAX_SENT_BYTES`]
//! once base64-encoded for the request), within one memory budget shared by every
//! decode of the process ([`budget`]), which refuses decompression bombs.

pub mod budget;

use bytes::Bytes;
use claw_agent::ImageData;
use image::ImageDecoder;
use image::{DynamicImage, ImageFormat, ImageReader, Limits};
use sha2::{Digest, Sha256};
use std::io::Cursor;
use std::path::Path;

/// Longest side sent, in pixels; larger images are scaled down to fit.
pub const MAX_SIDE: u32 = 2048;
/// Largest image sent, counted as the base64 text the request carries (Anthropic
/// refuses images over 5 MB there).
pub const MAX_SENT_BYTES: u64 = 5 * 1024 * 1024;
/// Largest file read as an image at all.
pub const MAX_FILE_BYTES: u64 = 64 * 1024 * 1024;
/// Most pixels decoded (width × height) when an image has to be scaled.
const MAX_PIXELS: u64 = 100_000_000;
/// The file extensions of the formats the APIs take.
pub const EXTENSIONS: [&str; 5] = ["png", "jpg", "jpeg", "gif", "webp"];

/// Why a file cannot be attached as an image.
#[derive(Debug, thiserror::Error)]
pub enum ImageError {
    /// The file could not be read.
    #[error("cannot read {name}: {source}")]
    Read {
        /// The file as named by the user.
        name: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The bytes are no PNG, JPEG, GIF or WebP image.
    #[error("{name} is not a PNG, JPEG, GIF or WebP image{what}")]
    NotAnImage {
        /// The file.
        name: String,
        /// What it is instead, when recognised (` (it is a TIFF image)`).
        what: String,
    },
    /// Something other than a regular file is there (a FIFO, a device, a directory).
    #[error("{name} is not a regular file (a device, FIFO, socket or directory)")]
    NotAFile {
        /// The file as named by the user.
        name: String,
    },
    /// The file is larger than any image worth sending.
    #[error("{name} is {size} bytes, more than the {limit} bytes an image may have here")]
    TooLarge {
        /// The file.
        name: String,
        /// Its size.
        size: u64,
        /// The limit.
        limit: u64,
    },
    /// The image is damaged or too large to decode.
    #[error("{name} cannot be decoded: {detail}")]
    Decode {
        /// The file.
        name: String,
        /// What the decoder said.
        detail: String,
    },
}

/// Whether a path names an image file by its extension (what `@path` attaches).
pub fn has_image_extension(path: &str) -> bool {
    Path::new(path)
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| EXTENSIONS.contains(&e.to_ascii_lowercase().as_str()))
}

/// The format of `bytes` when they start like one of the four formats sent.
pub fn sniff(bytes: &[u8]) -> Option<ImageFormat> {
    let format = image::guess_format(bytes).ok()?;
    matches!(
        format,
        ImageFormat::Png | ImageFormat::Jpeg | ImageFormat::Gif | ImageFormat::WebP
    )
    .then_some(format)
}

/// Reads the image file at `path` (shown to the user as `name`): a regular file only
/// (opened without blocking, so a FIFO or a device such as `/dev/zero` behind a link is
/// refused at once instead of read forever), its size checked before any byte is read,
/// and never more than that read.
pub fn load_file(path: &Path, name: &str) -> Result<ImageData, ImageError> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let read = |source| ImageError::Read {
        name: name.to_owned(),
        source,
    };
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_NONBLOCK | nix::libc::O_NOCTTY)
        .open(path)
        .map_err(read)?;
    let meta = file.metadata().map_err(read)?;
    if !meta.is_file() {
        return Err(ImageError::NotAFile {
            name: name.to_owned(),
        });
    }
    let size = meta.len();
    if size > MAX_FILE_BYTES {
        return Err(ImageError::TooLarge {
            name: name.to_owned(),
            size,
            limit: MAX_FILE_BYTES,
        });
    }
    let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
    // A file that grew since it was measured is not read past the limit.
    file.take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(read)?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(ImageError::TooLarge {
            name: name.to_owned(),
            size: bytes.len() as u64,
            limit: MAX_FILE_BYTES,
        });
    }
    let file_name = Path::new(name)
        .file_name()
        .map_or_else(|| name.to_owned(), |n| n.to_string_lossy().into_owned());
    from_bytes(&file_name, bytes)
}

/// The image in `bytes`, named `name`, scaled down if it is larger than sent.
pub fn from_bytes(name: &str, bytes: Vec<u8>) -> Result<ImageData, ImageError> {
    let Some(format) = sniff(&bytes) else {
        let what = image::guess_format(&bytes)
            .map(|f| format!(" (it is a {f:?} image)"))
            .unwrap_or_default();
        return Err(ImageError::NotAnImage {
            name: name.to_owned(),
            what,
        });
    };
    let decode_error = |e: image::ImageError| ImageError::Decode {
        name: name.to_owned(),
        detail: e.to_string(),
    };
    let (width, height) = ImageReader::with_format(Cursor::new(&bytes), format)
        .into_dimensions()
        .map_err(decode_error)?;
    if width <= MAX_SIDE && height <= MAX_SIDE && base64_len(bytes.len()) <= MAX_SENT_BYTES {
        return Ok(image_data(name, format, width, height, bytes));
    }
    if u64::from(width) * u64::from(height) > MAX_PIXELS {
        return Err(ImageError::Decode {
            name: name.to_owned(),
            detail: format!(
                "it is {width}×{height} pixels, more than the {} megapixels claw-tui scales \
                 down",
                MAX_PIXELS / 1_000_000
            ),
        });
    }
    let mut reader = ImageReader::with_format(Cursor::new(&bytes), format);
    let mut limits = Limits::default();
    limits.max_image_width = Some(width);
    limits.max_image_height = Some(height);
    limits.max_alloc = Some(budget::DECODE_BUDGET_BYTES);
    reader.limits(limits);
    let mut decoder = reader.into_decoder().map_err(decode_error)?;
    // Held until the scaled copy is encoded: the pixels, the copy and its encoding.
    let reservation =
        budget::reserve(decode_cost(decoder.total_bytes(), width, height)).map_err(|over| {
            ImageError::Decode {
                name: name.to_owned(),
                detail: over.to_string(),
            }
        })?;
    let mut limits = Limits::default();
    limits.max_alloc = Some(reservation.bytes());
    decoder.set_limits(limits).map_err(decode_error)?;
    let decoded = DynamicImage::from_decoder(decoder).map_err(decode_error)?;
    let scaled = scale_down(name, format, &decoded);
    drop(decoded);
    drop(reservation);
    scaled
}

/// What decoding and scaling an image of `width`×`height` whose pixels take `pixels`
/// bytes holds at most: the pixels, then at most [`MAX_SIDE`]² of them scaled (in the
/// same layout), flattened to RGB for JPEG (3 bytes each), and encoded (less than 4
/// bytes each).
fn decode_cost(pixels: u64, width: u32, height: u32) -> u64 {
    let count = u64::from(width) * u64::from(height);
    let per_pixel = pixels.div_ceil(count.max(1));
    let scaled = count.min(u64::from(MAX_SIDE) * u64::from(MAX_SIDE));
    pixels.saturating_add(scaled.saturating_mul(per_pixel + 3 + 4))
}

/// Scales `decoded` to fit [`MAX_SIDE`] and re-encodes it: JPEG stays JPEG; other formats
/// become PNG, or JPEG when the PNG would still be too large. Each try that is still too
/// large shrinks the image by a quarter.
fn scale_down(
    name: &str,
    format: ImageFormat,
    decoded: &DynamicImage,
) -> Result<ImageData, ImageError> {
    let mut side = MAX_SIDE.min(decoded.width().max(decoded.height()));
    for _ in 0..8 {
        let scaled = decoded.thumbnail(side, side);
        let mut attempts = Vec::with_capacity(2);
        if format != ImageFormat::Jpeg {
            attempts.push(ImageFormat::Png);
        }
        attempts.push(ImageFormat::Jpeg);
        for target in attempts {
            let bytes = encode(&scaled, target).map_err(|e| ImageError::Decode {
                name: name.to_owned(),
                detail: format!("cannot re-encode it: {e}"),
            })?;
            if base64_len(bytes.len()) <= MAX_SENT_BYTES {
                return Ok(image_data(
                    name,
                    target,
                    scaled.width(),
                    scaled.height(),
                    bytes,
                ));
            }
        }
        side = side * 3 / 4;
    }
    Err(ImageError::Decode {
        name: name.to_owned(),
        detail: "it stays too large even scaled down".to_owned(),
    })
}

fn encode(image: &DynamicImage, format: ImageFormat) -> image::ImageResult<Vec<u8>> {
    let mut out = Cursor::new(Vec::new());
    match format {
        ImageFormat::Jpeg => {
            // JPEG has no alpha: flattened to RGB.
            let rgb = DynamicImage::ImageRgb8(image.to_rgb8());
            rgb.write_with_encoder(image::codecs::jpeg::JpegEncoder::new_with_quality(
                &mut out, 85,
            ))?;
        }
        _ => image.write_to(&mut out, format)?,
    }
    Ok(out.into_inner())
}

/// Length of the base64 text of `n` bytes.
fn base64_len(n: usize) -> u64 {
    (n as u64).div_ceil(3) * 4
}

fn image_data(
    name: &str,
    format: ImageFormat,
    width: u32,
    height: u32,
    bytes: Vec<u8>,
) -> ImageData {
    let sha256 = Sha256::digest(&bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    ImageData {
        name: name.to_owned(),
        mime: format.to_mime_type().to_owned(),
        width,
        height,
        size: bytes.len() as u64,
        sha256,
        data: Bytes::from(bytes),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn png(width: u32, height: u32) -> Vec<u8> {
        let image = DynamicImage::new_rgb8(width, height);
        encode(&image, ImageFormat::Png).unwrap()
    }

    #[test]
    fn small_images_are_kept_byte_for_byte() {
        let bytes = png(64, 32);
        let image = from_bytes("a.png", bytes.clone()).unwrap();
        assert_eq!((image.width, image.height), (64, 32));
        assert_eq!(image.data.as_ref(), bytes.as_slice());
        assert_eq!(image.mime, "image/png");
        assert_eq!(image.sha256.len(), 64);
    }

    #[test]
    fn large_images_are_scaled_to_fit() {
        let image = from_bytes("wide.png", png(4096, 1024)).unwrap();
        assert_eq!((image.width, image.height), (2048, 512));
    }

    #[test]
    fn other_files_are_refused_by_their_bytes() {
        let error = from_bytes("notes.png", b"just text".to_vec()).unwrap_err();
        assert!(error.to_string().contains("not a PNG"), "{error}");
        assert!(has_image_extension("a/B.JPG"));
        assert!(!has_image_extension("a/b.tiff"));
    }
}
