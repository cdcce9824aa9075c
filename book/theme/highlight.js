// pipebook: not used. The book's listings are coloured by pipebook/highlight.js (the
// highlight.js core and the four grammars the book needs, in vendor/highlight/); this
// empty file stands in for mdBook's 130 KiB bundle of every common language.
