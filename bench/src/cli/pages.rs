//! `pipebench pages`: the writer's buffers page by page, or the page-table walk of an address.

use std::process::ExitCode;

use anyhow::Result;
use clap::Args;
use serde_json::json;

use pipebench::ends::options::WriterOptions;
use pipebench::memory::inspect;
use pipebench::memory::paging::{self, PageSize, Paging};
use pipebench::size::ByteSize;
use pipebench::steps::catalog::{self};

use super::{JsonFlag, UsageError};

/// `pipebench pages`.
#[derive(Debug, Args)]
pub struct PagesArgs {
    /// Just split this virtual address for a page-table walk (e.g. the article's
    /// 0x0000f2705af953c0).
    #[arg(long, value_name = "ADDR")]
    address: Option<String>,
    /// With --address: 4- or 5-level paging (default: 4 where the address is
    /// canonical with 48 bits, else 5).
    #[arg(long, value_name = "4|5", requires = "address", value_parser = clap::value_parser!(u32).range(4..=5))]
    levels: Option<u32>,
    /// Inspect the writer's buffers of this step (see `pipebench list`); the
    /// options below change them.
    #[arg(long, value_name = "STEP")]
    step: Option<String>,
    /// Bytes per buffer (the writer's chunk); default 256KiB or the step's.
    #[arg(long, value_name = "SIZE")]
    buf_size: Option<ByteSize>,
    /// Put the buffers in transparent huge pages.
    #[arg(long)]
    huge_pages: bool,
    /// Leave the buffers untouched (nothing will be mapped yet).
    #[arg(long, conflicts_with = "touch")]
    dont_touch_pages: bool,
    /// Write to the buffers first, even if the step does not.
    #[arg(long)]
    touch: bool,
    /// Start each buffer this many bytes into a page, as malloc does (the step's
    /// offset by default).
    #[arg(long, value_name = "BYTES", value_parser = clap::value_parser!(u16).range(0..4096))]
    buffer_offset: Option<u16>,
    /// Two buffers, as the vmsplice double buffer has.
    #[arg(long)]
    vmsplice: bool,
    #[command(flatten)]
    out: JsonFlag,
}

impl PagesArgs {
    /// The writer options whose buffers to inspect: the step's, changed by the flags.
    fn writer(&self) -> Result<WriterOptions> {
        let mut writer = match &self.step {
            Some(id) => {
                catalog::find(id)
                    .ok_or_else(|| {
                        UsageError(format!(
                            "--step `{id}` is not a step; known: {}",
                            catalog::ids().join(", ")
                        ))
                    })?
                    .writer
            }
            None => WriterOptions::default(),
        };
        if let Some(size) = self.buf_size {
            writer.common.buf_size = size;
        }
        writer.common.huge_pages |= self.huge_pages;
        writer.vmsplice |= self.vmsplice;
        if let Some(offset) = self.buffer_offset {
            writer.common.buffer_offset = Some(offset);
        }
        if self.dont_touch_pages {
            writer.dont_touch_pages = true;
        }
        if self.touch {
            writer.dont_touch_pages = false;
        }
        Ok(writer)
    }
}

/// `pipebench pages`.
pub fn pages(args: PagesArgs) -> Result<ExitCode> {
    if let Some(text) = &args.address {
        return split_address(text, args.levels, args.out.json);
    }
    let writer = args.writer()?;
    let report = inspect::inspect(&writer).map_err(|err| match err {
        inspect::InspectError::TooLarge { .. } => anyhow::Error::new(UsageError(err.to_string())),
        other => anyhow::Error::new(other),
    })?;
    if args.out.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
        return Ok(ExitCode::SUCCESS);
    }
    for (i, buffer) in report.buffers.iter().enumerate() {
        println!(
            "buffer {} of {}: {} at {:#x} ({} bytes into its page)",
            i + 1,
            report.buffers.len(),
            ByteSize(buffer.len),
            buffer.address,
            buffer.offset_in_page
        );
        print_walk(&buffer.walk);
        println!(
            "  {} pages of 4 KiB, {} present",
            buffer.pages.len(),
            buffer.present
        );
        if report.frames_visible {
            println!(
                "  {} in transparent huge pages: {} compound heads, {} tails",
                buffer.thp, buffer.heads, buffer.tails
            );
            for page in buffer.pages.iter().filter(|p| p.present).take(4) {
                let flags = page
                    .flags
                    .as_ref()
                    .map_or(String::new(), |f| format!(" [{}]", f.names.join(" ")));
                println!(
                    "    {:#x} -> frame {:#x}{flags}",
                    page.vaddr,
                    page.pfn.unwrap_or(0)
                );
            }
        }
        if let Some(huge) = &buffer.huge_pages {
            println!(
                "  huge pages: {} of {} ({})",
                ByteSize(huge.huge_bytes),
                ByteSize(huge.checked_bytes),
                huge.method
            );
        }
    }
    for limitation in &report.limitations {
        println!("note: {}", limitation.message);
    }
    Ok(ExitCode::SUCCESS)
}

/// `pipebench pages --address ADDR [--levels 4|5]`: the walk to a 4 KiB and to a
/// 2 MiB page.
fn split_address(text: &str, levels: Option<u32>, json: bool) -> Result<ExitCode> {
    let address = paging::parse_address(text).map_err(|e| UsageError(e.to_string()))?;
    let paging = match levels.and_then(Paging::from_levels) {
        Some(paging) => paging,
        // Auto: 48 bits where the address fits them, as Linux hands out by default.
        None if paging::is_canonical(address, Paging::FourLevel) => Paging::FourLevel,
        None => Paging::FiveLevel,
    };
    let note = (levels.is_none() && paging == Paging::FiveLevel).then(|| {
        format!("{address:#018x} is not canonical with 48 bits (bit 47 must be copied into bits 63..48), so it is split for 5-level paging")
    });
    let walks = [PageSize::Small, PageSize::Huge]
        .map(|page| paging::walk(address, paging, page).map_err(|e| UsageError(e.to_string())));
    let [small, huge] = walks;
    let (small, huge) = (small?, huge?);
    if json {
        println!(
            "{}",
            serde_json::to_string_pretty(&json!({
                "address": format!("{address:#018x}"), "levels": paging.levels(),
                "walks": [small, huge], "note": note,
            }))?
        );
    } else {
        if let Some(note) = note {
            println!("note: {note}");
        }
        print_walk(&small);
        print_walk(&huge);
    }
    Ok(ExitCode::SUCCESS)
}

fn print_walk(walk: &paging::Walk) {
    let steps: Vec<String> = walk
        .levels
        .iter()
        .map(|l| format!("{} {}", l.name, l.index))
        .collect();
    let page = match walk.page {
        PageSize::Small => "4 KiB",
        PageSize::Huge => "2 MiB",
    };
    println!(
        "{:#018x}: {} / offset {:#x} (a {page} page, {}-level paging)",
        walk.address,
        steps.join(" / "),
        walk.offset,
        walk.paging.levels()
    );
}
