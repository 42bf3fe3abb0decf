// Package web is Link Web (cmd/lnk-web): an MCP server with two calls,
// fetch (a URL → the page as markdown, with its title, final URL and
// status) and search (Brave's or Tavily's API), run outside every
// sandbox as a tool the owner adds (lnk sandbox tool add web), reached
// by an agent only through its proxy's tool route, which logs each call,
// and only once allowed (lnk agent allow NAME --tool web).
//
// # What it reaches
//
// Never this machine or its networks: every hop's host is read by
// internal/netclass's ParseHost (every IPv4 spelling as the address it
// means), resolved once, and every answer judged by netclass's one rule
// ([netclass.Judge], the sandbox proxy's own): one answer that is not
// public refuses the host whole. The connection goes only to the
// addresses that check returned (the guard's dialer: no second lookup).
// Each redirect, at most [MaxRedirects], is checked the same way; one
// from https:// to http:// is never followed; only http:// and https://,
// never with a login in the URL. A host named by --private-host is
// fetched wherever it resolves. With HTTPS_PROXY in the tool's
// environment the proxy connects: the names are still checked here.
//
// # Limits
//
// A page is read up to [MaxPage]; a page with its redirects and body, or
// a search, takes at most [CallTimeout]. At most [MaxCalls] calls are
// read and unanswered at once ([Gate]: the next is not read until one is
// answered); [MaxConverts] pages are made markdown at a time. HTML is
// parsed by golang.org/x/net/html and made markdown by html-to-markdown;
// scripts, styles, images, forms and embedded things are left out
// first, and a page nested deeper than [MaxDepth] elements is given as
// plain text, walked without recursion. A large page that finds the
// conversion gate's other slot free is made markdown in two halves at
// once, the second half on that slot (split.go): cut only where the
// halves' markdown joined is the whole page's, byte for byte, so the
// pages and halves converting never number more than MaxConverts.
//
// # Security
//
// Holds: the search key (BRAVE_API_KEY or TAVILY_API_KEY from its
// environment, taken out of it at start), sent in a header to the API
// alone; an error never carries it. The rtnetlink socket on which it
// knows this machine's own addresses; without them it does not start.
//
// May: resolve names and connect to the addresses it checked, or to the
// owner's proxy.
//
// Trusts: its command line and environment (the owner's). Not the
// client (the agent's harness), nor any page or API answer.
//
// Refuses: every forbidden address class and form, mixed answers,
// redirects past ten or to http://, other schemes, logins in URLs, pages
// past the size or time, anything but HTML and text. Every refusal is
// answered as a tool error with its reason (and where one exists the
// lnk command that would allow it) and logged once on stderr.
//
// Every answer tells the model the page's words are the web's, not its
// owner's, between two lines holding a tag made new for each answer.
// A client may render an answer as markdown, so the page's words never
// make a link, image or HTML there: HTML made markdown is escaped by the
// converter, and all else (a page given as plain text, a text/plain or
// JSON page, a title, the final URL, a search's results) is put in code
// by internal/mdliteral.
package web
