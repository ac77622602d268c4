//! `read_file` on images: returned as an image (read through the workspace handle),
//! scaled down when too large, re-encoded when too heavy; a symlink out of the
//! workspace and a decompression bomb are refused with nothing attached.

use super::{Setup, call};
use image::{DynamicImage, ImageFormat, RgbImage};
use serde_json::json;
use sha2::{Digest, Sha256};
use std::io::Cursor;

fn png(width: u32, height: u32) -> Vec<u8> {
    let mut out = Cursor::new(Vec::new());
    DynamicImage::new_rgb8(width, height)
        .write_to(&mut out, ImageFormat::Png)
        .unwrap();
    out.into_inner()
}

/// A PNG of random pixels: it does not compress, so it is as heavy as it is large.
fn noisy_png(side: u32) -> Vec<u8> {
    let mut rng = fastrand::Rng::with_seed(7);
    let pixels = RgbImage::from_fn(side, side, |_, _| {
        image::Rgb([rng.u8(..), rng.u8(..), rng.u8(..)])
    });
    let mut out = Cursor::new(Vec::new());
    DynamicImage::ImageRgb8(pixels)
        .write_to(&mut out, ImageFormat::Png)
        .unwrap();
    out.into_inner()
}

fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in bytes {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

/// A small PNG whose header claims `width`×`height` pixels.
fn png_claiming(width: u32, height: u32) -> Vec<u8> {
    let mut bytes = png(1, 1);
    // Signature (8), IHDR length (4), "IHDR" (4), then width and height.
    bytes[16..20].copy_from_slice(&width.to_be_bytes());
    bytes[20..24].copy_from_slice(&height.to_be_bytes());
    let crc = crc32(&bytes[12..29]);
    bytes[29..33].copy_from_slice(&crc.to_be_bytes());
    bytes
}

#[tokio::test]
async fn an_image_comes_back_as_an_image_with_its_description() {
    let s = Setup::new();
    let bytes = png(320, 200);
    s.file("shots/a.png", &bytes);
    let r = call(&s.read(), json!({"path": "shots/a.png"})).await;
    assert!(!r.is_error, "{r:?}");
    assert_eq!(
        r.content,
        format!(
            "Image shots/a.png (image/png, 320×200, {}) follows.",
            claw_tui::text::byte_size(bytes.len() as u64)
        )
    );
    assert_eq!(r.images.len(), 1);
    let image = &r.images[0];
    assert_eq!(
        (image.name.as_str(), image.width, image.height),
        ("a.png", 320, 200)
    );
    assert_eq!(image.data.as_ref(), bytes.as_slice());
    let hash: String = Sha256::digest(&bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(image.sha256, hash);
}

#[tokio::test]
async fn a_large_image_is_scaled_to_2048_on_its_longer_side() {
    let s = Setup::new();
    s.file("wide.png", png(4096, 1024));
    let r = call(&s.read(), json!({"path": "wide.png"})).await;
    assert!(!r.is_error, "{r:?}");
    assert_eq!((r.images[0].width, r.images[0].height), (2048, 512));
    assert!(r.content.contains("2048×512"), "{}", r.content);
}

#[tokio::test]
async fn a_heavy_image_is_re_encoded_to_fit_five_megabytes_of_base64() {
    let s = Setup::new();
    let bytes = noisy_png(1500);
    assert!(bytes.len() > 5 * 1024 * 1024, "{}", bytes.len());
    s.file("noise.png", &bytes);
    let r = call(&s.read(), json!({"path": "noise.png"})).await;
    assert!(!r.is_error, "{r:?}");
    let image = &r.images[0];
    assert_eq!(image.mime, "image/jpeg");
    assert!(
        image.size.div_ceil(3) * 4 <= 5 * 1024 * 1024,
        "{}",
        image.size
    );
    assert!(
        image.width <= 1500 && image.width >= 1000,
        "{}",
        image.width
    );
    let decoded = image::load_from_memory(&image.data).unwrap();
    assert_eq!(
        (decoded.width(), decoded.height()),
        (image.width, image.height)
    );
}

#[tokio::test]
async fn a_decompression_bomb_is_refused_without_decoding() {
    let s = Setup::new();
    s.file("bomb.png", png_claiming(60_000, 60_000));
    let r = call(&s.read(), json!({"path": "bomb.png"})).await;
    assert!(r.is_error, "{r:?}");
    assert!(r.images.is_empty());
    assert!(r.content.contains("60000×60000 pixels"), "{}", r.content);
}

#[tokio::test]
async fn a_symlink_to_an_image_outside_the_workspace_is_refused() {
    let s = Setup::new();
    std::fs::write(s.outer.join("private.png"), png(8, 8)).unwrap();
    std::os::unix::fs::symlink(s.outer.join("private.png"), s.root.join("link.png")).unwrap();
    std::os::unix::fs::symlink("../private.png", s.root.join("rel.png")).unwrap();
    for path in ["link.png", "rel.png", "../private.png"] {
        let r = call(&s.read(), json!({"path": path})).await;
        assert!(r.is_error, "{path}: {r:?}");
        assert!(r.images.is_empty(), "{path}");
        assert!(
            r.content.contains("outside the workspace"),
            "{path}: {}",
            r.content
        );
    }
}
