//! The two in-process mdBook preprocessors the server registers.

use mdbook_preprocessor::book::{Book, Chapter};
use mdbook_preprocessor::{Preprocessor, PreprocessorContext};

use super::error::BookError;
use super::i18n::Words;
use super::{directives, mermaid};

/// Expands `{{#run ID}}`, `{{#results}}` and `{{#system}}`, their text in an
/// edition's words.
#[derive(Debug, Clone, Default)]
pub(super) struct Widgets {
    words: Words,
}

impl Widgets {
    /// The directives of an edition other than the English.
    pub(crate) fn with_words(words: Words) -> Self {
        Widgets { words }
    }
}

/// Turns ```` ```mermaid ```` blocks into `<pre class="mermaid">`.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Mermaid;

/// The chapter's file as the author knows it, e.g. `book/src/baseline.md`.
fn chapter_file(ctx: &PreprocessorContext, chapter: &Chapter) -> String {
    chapter
        .source_path
        .as_ref()
        .or(chapter.path.as_ref())
        .map(|p| ctx.config.book.src.join(p).display().to_string())
        .unwrap_or_else(|| chapter.name.clone())
}

impl Preprocessor for Widgets {
    fn name(&self) -> &str {
        "pipebook-widgets"
    }

    fn run(&self, ctx: &PreprocessorContext, mut book: Book) -> anyhow::Result<Book> {
        // for_each_chapter_mut takes a closure that cannot fail: keep the first error.
        let mut failure: Option<BookError> = None;
        book.for_each_chapter_mut(|chapter| {
            if failure.is_some() {
                return;
            }
            match directives::expand_in(&chapter.content, &chapter_file(ctx, chapter), &self.words)
            {
                Ok(content) => chapter.content = content,
                Err(err) => failure = Some(err),
            }
        });
        match failure {
            Some(err) => Err(err.into()),
            None => Ok(book),
        }
    }
}

impl Preprocessor for Mermaid {
    fn name(&self) -> &str {
        "pipebook-mermaid"
    }

    fn run(&self, _ctx: &PreprocessorContext, mut book: Book) -> anyhow::Result<Book> {
        book.for_each_chapter_mut(|chapter| chapter.content = mermaid::expand(&chapter.content));
        Ok(book)
    }
}
