//! `chart.svg`: the ratio ours/theirs per case, and how cost grows with size.
//!
//! plotters with its SVG backend only: text is SVG `<text>` that the viewer renders
//! with its own fonts, so the bench carries no font and no rasteriser (the PNG chart
//! needed a bundled font, `image` and `ttf-parser`; plotters lays text out with its
//! built-in size estimate when no font feature is on).

use std::path::Path;

use anyhow::anyhow;
use plotters::prelude::*;

use super::model::{Baseline, CaseResult, Outcome, Report};

const FONT: &str = "sans-serif";
const OURS: RGBColor = RGBColor(0x1f, 0x77, 0xb4);
const THEIRS: RGBColor = RGBColor(0xd6, 0x27, 0x28);
const OTHER: RGBColor = RGBColor(0x2c, 0xa0, 0x2c);

type Panel<'a> = DrawingArea<SVGBackend<'a>, plotters::coord::Shift>;

/// Draws the chart into `path` (SVG).
pub fn draw(report: &Report, path: &Path) -> anyhow::Result<()> {
    let root = SVGBackend::new(path, (1500, 1100)).into_drawing_area();
    root.fill(&WHITE).map_err(err)?;
    let (title, body) = root.split_vertically(50);
    title
        .draw_text(
            &format!(
                "kubeplug vs kubectl — {} (median of {} runs)",
                report.started,
                if report.cases.iter().any(|c| c.cell.is_none()) {
                    report.runs
                } else {
                    report.matrix_runs
                }
            ),
            &(FONT, 26).into_font().color(&BLACK),
            (20, 12),
        )
        .map_err(err)?;
    let panels = body.split_evenly((2, 2));
    // The matrix's 30 cells have their table in results.md; beside the default set
    // they would crowd its bars past reading, so the bars are the default set's when
    // it ran, else the matrix's.
    let default_set: Vec<CaseResult> = report
        .cases
        .iter()
        .filter(|c| c.cell.is_none())
        .cloned()
        .collect();
    ratios(
        &panels[0],
        if default_set.is_empty() {
            &report.cases
        } else {
            &default_set
        },
    )?;
    growth(
        &panels[1],
        &report.cases,
        "create-file: wall time vs objects",
        "objects",
        "seconds",
        |c| {
            let mut points = Vec::new();
            if let Some((ours, theirs)) = measured(c) {
                points.extend(ours.wall().map(|w| ("ours", OURS, w.median)));
                points.extend(theirs.wall().map(|w| ("kubectl create -f", THEIRS, w)));
            }
            // The ceiling is measured even while our plugin is not there yet.
            points.extend(c.ceiling.map(|w| ("in-process ceiling", OTHER, w)));
            Some(points)
        },
        "create-file",
        true,
    )?;
    growth(
        &panels[2],
        &report.cases,
        "create-file: peak memory vs objects",
        "objects",
        "MiB",
        |c| {
            let (ours, theirs) = measured(c)?;
            let Baseline::Kubectl(t) = theirs else {
                return None;
            };
            Some(vec![
                ("ours", OURS, ours.rss_kib()?.median / 1024.0),
                ("kubectl create -f", THEIRS, t.rss_kib()?.median / 1024.0),
            ])
        },
        "create-file",
        false,
    )?;
    growth(
        &panels[3],
        &report.cases,
        "rolling-update: wall time vs replicas",
        "replicas",
        "seconds",
        |c| {
            let (ours, theirs) = measured(c)?;
            Some(vec![
                ("ours", OURS, ours.wall()?.median),
                ("ideal", OTHER, theirs.wall()?),
            ])
        },
        "rolling-update",
        false,
    )?;
    root.present().map_err(err)?;
    Ok(())
}

fn err<E: std::fmt::Debug>(e: E) -> anyhow::Error {
    anyhow!("drawing the chart: {e:?}")
}

fn measured(c: &CaseResult) -> Option<(&super::model::Side, &Baseline)> {
    match &c.outcome {
        Outcome::Measured { ours, theirs } => Some((ours, theirs)),
        _ => None,
    }
}

/// Horizontal bars of the wall-time ratio per case, on a log scale around 1.
fn ratios(area: &Panel<'_>, cases: &[CaseResult]) -> anyhow::Result<()> {
    // Bottom-up in plotters' coordinates: reversed, so the first case is on top.
    let rows: Vec<(String, Option<f64>)> = cases
        .iter()
        .rev()
        .map(|c| (c.name.clone(), c.wall_ratio()))
        .collect();
    let n = rows.len().max(1);
    let lo = rows
        .iter()
        .filter_map(|r| r.1)
        .fold(0.5f64, f64::min)
        .max(1e-4)
        / 2.0;
    let hi = rows.iter().filter_map(|r| r.1).fold(2.0f64, f64::max) * 2.0;
    let mut chart = ChartBuilder::on(area)
        .caption(
            "wall time ratio ours / kubectl (or ideal), log scale; < 1 is faster",
            (FONT, 20),
        )
        .margin(15)
        .x_label_area_size(35)
        .y_label_area_size(230)
        .build_cartesian_2d((lo..hi).log_scale(), 0f64..n as f64)
        .map_err(err)?;
    let labels = rows.clone();
    chart
        .configure_mesh()
        .disable_y_mesh()
        .y_labels(n * 2 + 1)
        .y_label_formatter(&move |y| {
            let i = (y - 0.5).round();
            if (y - 0.5 - i).abs() < 1e-6 && i >= 0.0 {
                labels
                    .get(i as usize)
                    .map(|r| r.0.clone())
                    .unwrap_or_default()
            } else {
                String::new()
            }
        })
        .x_label_formatter(&|x| format!("{x}×"))
        .label_style((FONT, 14))
        .draw()
        .map_err(err)?;
    for (i, (_, ratio)) in rows.iter().enumerate() {
        let y = i as f64;
        match ratio {
            Some(r) => {
                let color = if *r <= 1.0 { OURS } else { THEIRS };
                chart
                    .draw_series(std::iter::once(Rectangle::new(
                        [(lo, y + 0.2), (*r, y + 0.8)],
                        color.filled(),
                    )))
                    .map_err(err)?;
                chart
                    .draw_series(std::iter::once(Text::new(
                        super::report::ratio(*r),
                        (*r * 1.08, y + 0.35),
                        (FONT, 14).into_font(),
                    )))
                    .map_err(err)?;
            }
            None => {
                chart
                    .draw_series(std::iter::once(Text::new(
                        "not measured".to_string(),
                        (lo * 1.1, y + 0.35),
                        (FONT, 14).into_font().color(&RGBColor(0x80, 0x80, 0x80)),
                    )))
                    .map_err(err)?;
            }
        }
    }
    chart
        .draw_series(LineSeries::new(
            [(1.0, 0.0), (1.0, n as f64)],
            BLACK.stroke_width(1),
        ))
        .map_err(err)?;
    Ok(())
}

type Points<'a> = Vec<(&'a str, RGBColor, f64)>;
/// A named, coloured line of (size, value) points.
type Line<'a> = (&'a str, RGBColor, Vec<(f64, f64)>);

/// One line per side over the sizes of a series (log-scale sizes; log-scale values
/// when `log_y`).
#[allow(clippy::too_many_arguments)]
fn growth(
    area: &Panel<'_>,
    cases: &[CaseResult],
    caption: &str,
    x_desc: &str,
    y_desc: &str,
    values: impl Fn(&CaseResult) -> Option<Points<'static>>,
    series: &str,
    log_y: bool,
) -> anyhow::Result<()> {
    let mut lines: Vec<Line<'_>> = Vec::new();
    let mut sizes = Vec::new();
    for c in cases
        .iter()
        .filter(|c| c.series.is_some_and(|s| s.name == series))
    {
        let size = f64::from(c.series.map(|s| s.size).unwrap_or(1));
        sizes.push(size);
        for (name, color, v) in values(c).unwrap_or_default() {
            match lines.iter_mut().find(|l| l.0 == name) {
                Some(line) => line.2.push((size, v)),
                None => lines.push((name, color, vec![(size, v)])),
            }
        }
    }
    // The x axis is labelled at the measured sizes only (3, 10, 30), not at the
    // round numbers a log axis picks by itself (10, 20, 30, 40 hides the 3).
    let (x_lo, x_hi) = sizes
        .iter()
        .fold((f64::MAX, f64::MIN), |(lo, hi), s| (lo.min(*s), hi.max(*s)));
    let (x_lo, x_hi) = if x_lo <= x_hi {
        (x_lo / 1.5, x_hi * 1.5)
    } else {
        (1.0, 10.0)
    };
    let all: Vec<f64> = lines.iter().flat_map(|l| l.2.iter().map(|p| p.1)).collect();
    let y_hi = all.iter().copied().fold(f64::MIN, f64::max);
    let y_lo = all.iter().copied().fold(f64::MAX, f64::min);
    let caption = if lines.is_empty() {
        format!("{caption} (not measured yet)")
    } else {
        caption.to_string()
    };
    let mut builder = ChartBuilder::on(area);
    builder
        .caption(caption, (FONT, 20))
        .margin(15)
        .x_label_area_size(40)
        .y_label_area_size(70);
    if log_y {
        let (lo, hi) = if all.is_empty() {
            (0.1, 10.0)
        } else {
            (y_lo.max(1e-4) / 2.0, y_hi * 2.0)
        };
        let mut chart = builder
            .build_cartesian_2d(
                (x_lo..x_hi).log_scale().with_key_points(sizes.clone()),
                (lo..hi).log_scale(),
            )
            .map_err(err)?;
        chart
            .configure_mesh()
            .x_desc(x_desc)
            .y_desc(y_desc)
            .x_label_formatter(&|x| format!("{x:.0}"))
            .label_style((FONT, 14))
            .draw()
            .map_err(err)?;
        plot_lines(&mut chart, &lines)?;
    } else {
        let hi = if all.is_empty() { 10.0 } else { y_hi * 1.2 };
        let mut chart = builder
            .build_cartesian_2d(
                (x_lo..x_hi).log_scale().with_key_points(sizes.clone()),
                0f64..hi,
            )
            .map_err(err)?;
        chart
            .configure_mesh()
            .x_desc(x_desc)
            .y_desc(y_desc)
            .x_label_formatter(&|x| format!("{x:.0}"))
            .label_style((FONT, 14))
            .draw()
            .map_err(err)?;
        plot_lines(&mut chart, &lines)?;
    }
    Ok(())
}

fn plot_lines<'a, X, Y>(
    chart: &mut ChartContext<'a, SVGBackend<'a>, Cartesian2d<X, Y>>,
    lines: &[Line<'_>],
) -> anyhow::Result<()>
where
    X: Ranged<ValueType = f64>,
    Y: Ranged<ValueType = f64>,
{
    for (name, color, points) in lines {
        let color = *color;
        chart
            .draw_series(LineSeries::new(
                points.iter().copied(),
                color.stroke_width(2),
            ))
            .map_err(err)?
            .label(*name)
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
            });
        chart
            .draw_series(points.iter().map(|p| Circle::new(*p, 4, color.filled())))
            .map_err(err)?;
    }
    if !lines.is_empty() {
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .label_font((FONT, 14))
            .position(SeriesLabelPosition::UpperLeft)
            .draw()
            .map_err(err)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Link;
    use crate::model::{BinarySize, Sample, Series, Side};

    fn side(walls: &[f64], rss: u64) -> Side {
        Side {
            command: "cmd".into(),
            samples: walls
                .iter()
                .map(|w| Sample {
                    wall: *w,
                    cpu: *w,
                    max_rss_kib: rss,
                    requests: None,
                    traffic: None,
                    cache_bytes: None,
                })
                .collect(),
        }
    }

    fn case(name: &str, series: Option<Series>, outcome: Outcome) -> CaseResult {
        CaseResult {
            name: name.into(),
            title: String::new(),
            series,
            outcome,
            targets: vec![],
            ceiling: series.map(|s| f64::from(s.size) / 2500.0),
            notes: vec![],
            seconds: 1.0,
            link: Link::default(),
            cell: None,
            size: None,
            kubectl_fewer: None,
        }
    }

    /// Renders with the bundled font only: no system font, fontconfig or freetype.
    #[test]
    fn draws_a_png_with_measured_and_skipped_cases() {
        let measured = |o: f64, t: f64| Outcome::Measured {
            ours: side(&[o, o * 1.1], 8_000),
            theirs: Baseline::Kubectl(side(&[t, t * 1.1], 40_000)),
        };
        let cf = |size| {
            Some(Series {
                name: "create-file",
                size,
            })
        };
        let ru = |size, ours: f64, ideal| {
            case(
                &format!("rolling-update-{size}"),
                Some(Series {
                    name: "rolling-update",
                    size,
                }),
                Outcome::Measured {
                    ours: side(&[ours], 9_000),
                    theirs: Baseline::Ideal {
                        wall: ideal,
                        how: String::new(),
                    },
                },
            )
        };
        let report = Report {
            started: "2026-11-22 01:40 UTC".into(),
            environment: vec![],
            runs: 2,
            matrix_runs: 3,
            cases: vec![
                case("help-run-pod", None, measured(0.002, 0.05)),
                case(
                    "run-pod-create",
                    None,
                    Outcome::Skipped("plugin not implemented".into()),
                ),
                case("create-file-50", cf(50), measured(0.05, 0.3)),
                case("create-file-500", cf(500), measured(0.3, 2.3)),
                case("create-file-5000", cf(5000), Outcome::Failed("x".into())),
                ru(3, 1.2, 0.9),
                ru(10, 4.0, 3.0),
                ru(30, 10.3, 9.0),
            ],
            binaries: vec![BinarySize {
                name: "x".into(),
                bytes: 1,
            }],
            kubectl_size: None,
            total_seconds: 1.0,
            build_seconds: None,
            cluster_seconds: None,
            notes: vec![],
        };
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("chart.svg");
        draw(&report, &path).unwrap();
        let svg = std::fs::read_to_string(&path).unwrap();
        assert!(svg.starts_with("<svg"), "{}", &svg[..svg.len().min(200)]);
        assert!(svg.trim_end().ends_with("</svg>"));
        // The titles, a case and the legend are there as text.
        for text in [
            "kubeplug vs kubectl",
            "create-file-500",
            "in-process ceiling",
        ] {
            assert!(svg.contains(text), "{text} missing");
        }
        if let Some(keep) = std::env::var_os("KUBEPLUG_KEEP_CHART") {
            std::fs::copy(&path, keep).unwrap();
        }
    }
}
