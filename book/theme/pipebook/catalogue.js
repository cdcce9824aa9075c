// The page's words for its own language: msgid (the English) -> text. The English
// edition needs none, so this one is empty; the Chinese build REPLACES this file in
// its copy of the modules (/zh-CN/pipebook/catalogue.js) with the translations from
// po/zh-CN.po, so only t() in i18n.js ever reads it.
export const messages = {};
