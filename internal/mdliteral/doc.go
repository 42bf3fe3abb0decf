// Package mdliteral writes untrusted text into Markdown so that it shows
// as the text it is: no link, image, autolink, raw HTML, heading or
// emphasis can be made from it, whatever it holds. [Block] puts text in
// a fenced code block and [Span] puts one line in a code span, each
// delimited by a run of backticks longer than any run inside the text,
// so the text can neither close its delimiter early nor open a
// construct of its own (CommonMark: inside code, nothing is parsed).
//
// # Security
//
// It holds nothing and trusts nothing: every byte it is given may be a
// web page's. Invalid UTF-8 becomes U+FFFD. Where the text comes from a
// converter that escapes it itself (html-to-markdown), that converter is
// the one that answers for it; everything else a client may render as
// Markdown goes through here.
package mdliteral
