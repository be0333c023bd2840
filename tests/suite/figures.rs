//! The capacity figures: every `capacity/<preset>.svg` renders with a real SVG
//! renderer (Debian's `rsvg-convert`) to a PNG of the figure's size, in which the
//! workload segments and the budget line are actually drawn; `capacity --format svg`
//! prints the same bytes; the chart carries the defaults' figure and its README shows
//! it.

use crate::support::*;
use flate2::read::ZlibDecoder;
use shipshape::generate::generate_outputs;
use shipshape::spec::load_spec;
use std::io::Read;
use std::path::Path;

/// A decoded 8-bit RGB or RGBA PNG: width, height and RGB triples.
struct Image {
    width: usize,
    height: usize,
    pixels: Vec<[u8; 3]>,
}

fn paeth(a: u8, b: u8, c: u8) -> u8 {
    let p = i16::from(a) + i16::from(b) - i16::from(c);
    let (pa, pb, pc) = (
        (p - i16::from(a)).abs(),
        (p - i16::from(b)).abs(),
        (p - i16::from(c)).abs(),
    );
    if pa <= pb && pa <= pc {
        a
    } else if pb <= pc {
        b
    } else {
        c
    }
}

/// Decodes what `rsvg-convert` writes: 8-bit RGB or RGBA, not interlaced.
fn decode_png(bytes: &[u8]) -> Image {
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "not a PNG");
    let mut pos = 8;
    let (mut width, mut height, mut channels) = (0, 0, 0);
    let mut idat = Vec::new();
    while pos + 8 <= bytes.len() {
        let len = u32::from_be_bytes(bytes[pos..pos + 4].try_into().unwrap()) as usize;
        let kind = &bytes[pos + 4..pos + 8];
        let data = &bytes[pos + 8..pos + 8 + len];
        match kind {
            b"IHDR" => {
                width = u32::from_be_bytes(data[0..4].try_into().unwrap()) as usize;
                height = u32::from_be_bytes(data[4..8].try_into().unwrap()) as usize;
                assert_eq!(data[8], 8, "bit depth");
                channels = match data[9] {
                    2 => 3,
                    6 => 4,
                    other => panic!("colour type {other}"),
                };
                assert_eq!(data[12], 0, "interlaced");
            }
            b"IDAT" => idat.extend_from_slice(data),
            _ => {}
        }
        pos += 12 + len;
    }
    let mut raw = Vec::new();
    ZlibDecoder::new(&idat[..]).read_to_end(&mut raw).unwrap();
    let stride = width * channels;
    assert_eq!(raw.len(), height * (stride + 1), "image data size");
    let mut prev = vec![0u8; stride];
    let mut pixels = Vec::with_capacity(width * height);
    for row in raw.chunks(stride + 1) {
        let filter = row[0];
        let mut line = row[1..].to_vec();
        for i in 0..stride {
            let a = if i >= channels { line[i - channels] } else { 0 };
            let b = prev[i];
            let c = if i >= channels { prev[i - channels] } else { 0 };
            let add = match filter {
                0 => 0,
                1 => a,
                2 => b,
                3 => ((u16::from(a) + u16::from(b)) / 2) as u8,
                4 => paeth(a, b, c),
                f => panic!("filter {f}"),
            };
            line[i] = line[i].wrapping_add(add);
        }
        pixels.extend(line.chunks(channels).map(|p| [p[0], p[1], p[2]]));
        prev = line;
    }
    Image {
        width,
        height,
        pixels,
    }
}

fn count(image: &Image, rgb: [u8; 3]) -> usize {
    image.pixels.iter().filter(|p| **p == rgb).count()
}

/// The `width="..." height="..."` of the root element.
fn svg_size(svg: &str) -> (usize, usize) {
    let attr = |name: &str| -> usize {
        let start = svg.find(&format!(" {name}=\"")).unwrap() + name.len() + 3;
        svg[start..].split('"').next().unwrap().parse().unwrap()
    };
    (attr("width"), attr("height"))
}

fn rasterise(svg: &Path, png: &Path) -> Image {
    let (code, _, err) = run(
        &rsvg_convert(),
        &[
            "--format",
            "png",
            "--output",
            png.to_str().unwrap(),
            svg.to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(code, 0, "rsvg-convert {}: {err}", svg.display());
    assert!(err.is_empty(), "rsvg-convert warned: {err}");
    decode_png(&std::fs::read(png).unwrap())
}

#[test]
fn every_capacity_figure_renders_with_rsvg_convert_at_its_size() {
    let scratch = Scratch::new("figures");
    let mut checked = 0;
    for (name, spec_path) in examples() {
        let spec = load_spec(&std::fs::read_to_string(&spec_path).unwrap(), &name).unwrap();
        let files = generate_outputs(&spec).unwrap().files;
        for (path, svg) in files.iter().filter(|(p, _)| p.ends_with(".svg")) {
            let file = scratch.path().join(path.replace('/', "-"));
            std::fs::write(&file, svg).unwrap();
            let image = rasterise(&file, &file.with_extension("png"));
            let (width, height) = svg_size(svg);
            assert_eq!(
                (image.width, image.height),
                (width, height),
                "{name}/{path}"
            );
            assert_eq!(width, 720, "{name}/{path}");
            assert!(height >= 120, "{name}/{path}: {height}");
            // Drawn, not blank: the workloads' colours fill bar segments (the first
            // workload may be a one-connection hook Job), and the budget line is there.
            let blue: usize = [
                [0x00, 0x72, 0xB2],
                [0xE6, 0x9F, 0x00],
                [0x00, 0x9E, 0x73],
                [0xCC, 0x79, 0xA7],
            ]
            .into_iter()
            .map(|colour| count(&image, colour))
            .sum();
            let line = count(&image, [0xC0, 0x00, 0x00]);
            let white = count(&image, [0xFF, 0xFF, 0xFF]);
            assert!(
                blue > 500,
                "{name}/{path}: {blue} pixels of the workloads' colours"
            );
            assert!(
                line >= 20,
                "{name}/{path}: {line} pixels of the budget line"
            );
            assert!(
                white > image.pixels.len() / 3,
                "{name}/{path}: white background"
            );
            checked += 1;
        }
    }
    assert!(checked >= 13, "only {checked} figures");
}

#[test]
fn the_gateway_figure_has_a_bar_per_budget_sized_by_its_numbers() {
    let scratch = Scratch::new("figure-gateway");
    let svg = std::fs::read_to_string(
        repo_root().join("golden/llm-gateway/capacity/production-split.svg"),
    )
    .unwrap();
    for header in [
        "PostgreSQL connections: peak 1774 of budget 1800, 26 spare",
        "Redis cache clients: peak 1408 of budget 1600, 192 spare",
        "Redis critical clients: peak 2816 of budget 3000, 184 spare",
        "Redis total clients: peak 4352 of budget 4400, 48 spare",
    ] {
        assert!(svg.contains(header), "{header}");
    }
    for legend in [
        "api 1406",
        "batch-worker 266",
        "operators 100 (reserved)",
        "reserved 128",
    ] {
        assert!(svg.contains(&format!(">{legend}</text>")), "{legend}");
    }
    let file = scratch.path().join("production-split.svg");
    std::fs::write(&file, &svg).unwrap();
    let image = rasterise(&file, &scratch.path().join("production-split.png"));
    // The api's PostgreSQL segment: 1406 of 1800 x 1.04 over 680 px is 510.7 px wide
    // and 22 px high; with its three Redis segments and four swatches the api's blue
    // covers well over 4 x 400 x 20 pixels, and the second workload's orange less.
    let blue = count(&image, [0x00, 0x72, 0xB2]);
    let orange = count(&image, [0xE6, 0x9F, 0x00]);
    assert!(blue > 32_000, "{blue}");
    assert!(
        orange > 4 * 80 * 20 && orange < blue / 3,
        "{orange} vs {blue}"
    );
}

#[test]
fn capacity_svg_prints_the_generated_figure_and_the_chart_shows_the_defaults() {
    let spec = repo_root().join("examples/llm-gateway/shipshape.yaml");
    let (code, svg, err) = run(
        Path::new(env!("CARGO_BIN_EXE_shipshape")),
        &[
            "--spec",
            spec.to_str().unwrap(),
            "capacity",
            "--preset",
            "production-split",
            "--format",
            "svg",
        ],
        &[],
    );
    assert_eq!(code, 0, "{err}");
    let golden = repo_root().join("golden/llm-gateway");
    let read = |p: &str| std::fs::read_to_string(golden.join(p)).unwrap();
    assert_eq!(svg, read("capacity/production-split.svg"));
    assert_eq!(read("chart/capacity.svg"), read("capacity/default.svg"));
    assert!(read("chart/README.md")
        .contains("![Peak connections of the default values against each budget](capacity.svg)"));
    // Self-contained: no script, no external reference, a generic font.
    for (path, text) in [("capacity/production-split.svg", &svg)] {
        for forbidden in ["<script", "href", "@import", "@font-face", "url(http"] {
            assert!(!text.contains(forbidden), "{path}: {forbidden}");
        }
        assert!(text.contains(r#"font-family="sans-serif""#));
    }
}
