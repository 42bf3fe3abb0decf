// Package secrets is ~/.lnk/secrets.toml: the owner's secrets, each with
// the agents it is granted to (by ID, never by name) and, for a sealed
// secret, the one internet host its proxy adds it to requests for.
//
//	# Link's secrets (lnk secret …). Mode 600; no sandbox ever reaches it.
//	[secrets.AGENT_MAIN_MODEL_KEY]
//	value = "sk-…"
//	agents = ["0f3c…"]                   # agent IDs
//	[secrets.GITHUB_TOKEN]
//	value = "ghp_…"
//	internet_host = "api.github.com"     # sealed: the proxy adds it for this host alone
//	agents = ["0f3c…"]
//	[secrets.AGENT_MAIN_MODEL_KEY_ANTHROPIC]
//	value = "sk-ant-…"
//	internet_host = "api.anthropic.com"
//	headers = ["X-Api-Key"]              # where the host authenticates; Authorization if absent
//	agents = ["0f3c…"]
//
// A sealed secret's value is added only to the request headers its
// grant names (headers; Authorization when it names none), never to a
// body, a query or a path ([Seal]). A header that describes the request
// or its connection (Host, Content-Length, Accept-Encoding, Range, …)
// can't be named.
//
// Names are upper-case letters, digits and _, starting with a letter, as
// the spec names them (AGENT_<AGENT>_MODEL_KEY,
// AGENT_<AGENT>_TELEGRAM_BOT_TOKEN, …). An agent made later with a granted
// agent's name has another ID, so none of its secrets.
//
// # Security
//
// It holds secret values only as [secret.Value]s, which never print; the
// file's bytes are zeroed once parsed (the TOML decoder's own transient
// copies are left to the collector). It opens ~/.lnk and the file never
// through a link (O_NOFOLLOW at each step), refuses a file that is not
// regular, not the owner's, or readable by anyone else, or past 1 MiB,
// and writes it whole: a 0600 temporary file beside it, fsync, rename,
// fsync of the folder, under an exclusive lock (~/.lnk/secrets.lock).
// Parsing is strict: an unknown key, a bad name, an empty or over-long
// value, a malformed agent ID or host is an error naming the line's
// secret, never its value. It never reads or removes a key an older
// layout left ([LegacyKeys] names where by lstat alone).
package secrets
