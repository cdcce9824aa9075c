//! The programs `pipebench tool` measures: a fixed, vetted table. A tool is
//! named by its id; its command line is written here, never taken from a
//! request, so a page can only choose among these.
//!
//! Each entry says how the program is run as the pipe's writer (pipebench's
//! reader takes what it writes) and as its reader (pipebench's writer feeds it),
//! with `{file}` standing for a file of the run's size in a private run folder
//! (in the page cache: it was just written) and `{bytes}` for the size.

use serde::Serialize;

/// Which end of the pipe the tool is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum ToolEnd {
    /// The tool writes into the pipe; pipebench reads and counts.
    Writer,
    /// pipebench writes into the pipe; the tool reads it.
    Reader,
}

impl ToolEnd {
    /// `writer` or `reader`.
    pub fn name(self) -> &'static str {
        match self {
            ToolEnd::Writer => "writer",
            ToolEnd::Reader => "reader",
        }
    }
}

/// Where a tool's program comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Program {
    /// A program found on `PATH` by this name.
    OnPath(&'static str),
    /// pipebench's own end (`write` or `read`): the article's programs, the
    /// reference the others are measured against.
    Own,
}

/// What stdin a tool gets when it is the writer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Input {
    /// Nothing (`/dev/null`).
    Null,
    /// The run's file.
    File,
}

/// How a tool runs as one end.
#[derive(Debug, Clone, Copy)]
pub struct ToolInvocation {
    /// Its arguments, with `{file}` and `{bytes}` filled in at run time.
    pub args: &'static [&'static str],
    /// Its stdin, as the writer (as the reader it is the pipe).
    pub input: Input,
    /// Whether it writes forever (`yes`): pipebench's reader stops at the size
    /// and closes the pipe, and the tool dies of SIGPIPE.
    pub endless: bool,
}

/// One program of the table.
#[derive(Debug, Clone, Copy)]
pub struct Tool {
    /// Its id (`cat`, `dd-1m`).
    pub id: &'static str,
    /// What it is, for a reader.
    pub title: &'static str,
    /// The program.
    pub program: Program,
    /// As the writer, when it can be one.
    pub writer: Option<ToolInvocation>,
    /// As the reader, when it can be one.
    pub reader: Option<ToolInvocation>,
}

impl Tool {
    /// How it runs as `side`, when it can.
    pub fn usage(&self, side: ToolEnd) -> Option<ToolInvocation> {
        match side {
            ToolEnd::Writer => self.writer,
            ToolEnd::Reader => self.reader,
        }
    }

    /// The program's name as a person would type it.
    pub fn program_name(&self) -> &'static str {
        match self.program {
            Program::OnPath(name) => name,
            Program::Own => "pipebench",
        }
    }
}

const fn writes(args: &'static [&'static str], input: Input) -> Option<ToolInvocation> {
    Some(ToolInvocation {
        args,
        input,
        endless: false,
    })
}

const fn reads(args: &'static [&'static str]) -> Option<ToolInvocation> {
    Some(ToolInvocation {
        args,
        input: Input::Null,
        endless: false,
    })
}

/// The table.
pub const TOOLS: &[Tool] = &[
    Tool {
        id: "yes",
        title: "yes: the same line forever",
        program: Program::OnPath("yes"),
        writer: Some(ToolInvocation {
            args: &[],
            input: Input::Null,
            endless: true,
        }),
        reader: None,
    },
    Tool {
        id: "cat",
        title: "cat: a file from the page cache, or stdin to /dev/null",
        program: Program::OnPath("cat"),
        writer: writes(&["{file}"], Input::Null),
        reader: reads(&[]),
    },
    Tool {
        id: "dd",
        title: "dd with its default 512-byte blocks",
        program: Program::OnPath("dd"),
        writer: writes(&["if={file}", "status=none"], Input::Null),
        reader: reads(&["of=/dev/null", "status=none"]),
    },
    Tool {
        id: "dd-1m",
        title: "dd bs=1M",
        program: Program::OnPath("dd"),
        writer: writes(&["if={file}", "bs=1M", "status=none"], Input::Null),
        reader: reads(&["of=/dev/null", "bs=1M", "status=none"]),
    },
    Tool {
        id: "pv",
        title: "pv, quiet: a file, or stdin to /dev/null",
        program: Program::OnPath("pv"),
        writer: writes(&["-q", "{file}"], Input::Null),
        reader: reads(&["-q"]),
    },
    Tool {
        id: "tee",
        title: "tee: stdin to stdout (and no file)",
        program: Program::OnPath("tee"),
        writer: writes(&[], Input::File),
        reader: reads(&[]),
    },
    Tool {
        id: "head",
        title: "head -c: zeros from /dev/zero, or the first bytes of stdin",
        program: Program::OnPath("head"),
        writer: writes(&["-c", "{bytes}", "/dev/zero"], Input::Null),
        reader: reads(&["-c", "{bytes}"]),
    },
    Tool {
        id: "pipebench",
        title: "the article's own write and read (256 KiB write(2) and read(2) calls)",
        program: Program::Own,
        writer: writes(&["write", "--bytes", "{bytes}"], Input::Null),
        reader: reads(&["read", "--bytes", "{bytes}"]),
    },
];

/// The tool `id`, if the table has it.
pub fn find(id: &str) -> Option<&'static Tool> {
    TOOLS.iter().find(|tool| tool.id == id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_and_every_tool_has_an_end() {
        for (i, tool) in TOOLS.iter().enumerate() {
            assert!(TOOLS[..i].iter().all(|t| t.id != tool.id), "{}", tool.id);
            assert!(
                tool.writer.is_some() || tool.reader.is_some(),
                "{}",
                tool.id
            );
            // Only a writer may be endless: a reader must stop on its own.
            assert!(tool.reader.is_none_or(|r| !r.endless), "{}", tool.id);
        }
        assert!(find("cat").is_some() && find("rm").is_none());
    }
}
