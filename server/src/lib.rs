//! `pipebook`: builds the book and serves it with a live runner for its steps.
