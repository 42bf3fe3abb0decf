// Package config is Link Harness's config.json: what `lnk agent start`
// writes into the harness's home (~/Link/Agents/<agent>/Harnesses/link,
// 0700) before each start, and what cmd/lnk-harness reads inside the
// agent's sandbox. It names the agent (ID, owner, name), the endpoint's
// key (32 fresh random bytes at each start, hex), the port ($LNK_PORT),
// the model's endpoint (format, base URL behind the proxy, model, a
// placeholder key: with keys on the wire the harness never holds the
// real one), an optional fallback, the tools it may call (each name and
// the $LNK_TOOL_ variable holding its route) and [storage].
//
// # Security
//
// The file is the owner's, mode 0600 in a 0700 folder, at most 1 MiB,
// written atomically through internal/ownerfile and read never through a
// link nor blocking on a fifo. Parse is strict: an unknown field, a
// second value, a key of the wrong length, an ID that isn't 32 hex
// digits, a model format Link doesn't speak or a port outside 1024-65535
// is refused with the reason. A config with no key parses (NoKey), and
// its endpoint then answers every request 503. It holds nothing between
// calls; the key is the caller's to keep out of logs.
package config
