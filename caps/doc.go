// Package caps is an agent's grants: the sandbox spec (TOML), its two
// layers (the agent's Config/sandbox.toml and the harness's
// ~/.lnk/harnesses/<harness>.toml), the rules that stop a grant widening
// the sandbox, and the compile step that turns both into one checked
// [Compiled] value that the sandbox builder, the proxy, the kernel and the
// tool bridge are handed.
//
// # The spec file
//
// Every table is optional; what the agent's own file leaves out is Link's
// default ([internet] on for any host, Link's [commands], [files] write =
// ["work"] in the agent's Home), what a harness's file leaves out it
// doesn't grant. Relative paths are inside the agent's Home. A missing
// agent file loads closed (recreate.go): none of those defaults.
//
//	[files]
//	read  = ["~"]
//	write = ["work", "~/Projects/site"]
//	read_only = ["~/Projects/site/lib/.git"]   # found by allow --write (nested.go)
//	write_git = ["work"]                       # --write-git: not scanned
//	[internet]
//	on = true
//	hosts = ["api.example.com"]   # none: any host
//	per_minute = 60
//	tcp = ["db.example.com:5432"]
//	[commands]
//	allow = ["git", "/usr/bin/python3"]   # or "*"
//	[localhost]
//	ports = [8080]                # "*" only with [network] mode = "host"
//	[lan]
//	hosts = ["nas.local"]
//	[network]
//	mode = "host"
//	[browser]
//	hosts = ["github.com"]
//	[tools]
//	strangers = ["memory"]
//	[tools.grant.github]
//	allow = ["search_code", "resources/read"]   # or ask = "none"
//	[teams.site]
//	read = ["docs"]
//	write = ["out"]
//	[model]
//	allow = ["claude-sonnet"]
//	[tool.run]
//	timeout = "2m"
//	output = 65536
//	[tool.memory]
//	notes = 4096
//	[tool.scheduler]
//	hops = 8
//	[run]
//	idle_after = "5m"
//
// # Security
//
// Holds: nothing secret. It reads and writes only Link's own settings
// files (folders 0700, files 0600), never following a link in Link's own
// folders, and writes atomically (temp beside, fsync, rename, fsync the
// folder); nothing is written on a refusal.
//
// Trusts: the owner's HOME and the owner's command line. It does not trust
// a spec file's contents: decoding is strict (an unknown key or a wrong
// type is refused naming the file, line and key), and a spec file that is
// a link or not a regular file is refused.
//
// Refuses, each with its own typed error (see rules.go): a files folder
// that is the home folder or holds it, a dot folder in it, Link's
// settings, another agent's folder or a harness home; a path through a
// symlink, with "..", or with a NUL byte; a read-only folder inside a
// written one; a namespace name or one of Link's own tools as a tool
// grant; [localhost] ports = ["*"] without [network] mode = "host".
// ~/Link/Agents (but the agent's own Home), ~/Link/History, ~/Link/Teams
// and ~/.lnk stay hidden whatever is granted.
//
// Two lnk agent allow|deny at once don't lose each other's change: each
// holds an flock on the agent's Config folder while it reads, checks and
// writes sandbox.toml.
package caps
