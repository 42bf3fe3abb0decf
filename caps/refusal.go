package caps

import (
	"fmt"

	"lnk.dev/lnk/internal/refusal"
)

// Refusal is a grant refused by a rule: Link's one refusal shape
// (internal/refusal). Each rule has one sentinel below; errors.Is(err,
// ErrDotFolder) tells a refusal by that rule apart from any other, and
// errors.As gives its rule and hint. A refusal of a path names it in its
// Reason.
type Refusal = refusal.Refusal

func rule(name, why string) *Refusal { return refusal.Sentinel(name, why) }

// at makes a refusal of sentinel s for path p, with an optional hint.
func at(s *Refusal, p string, hint ...string) *Refusal {
	r := &Refusal{Reason: fmt.Sprintf("refused %s: %s (rule %s)", p, s.Reason, s.Rule), Rule: s.Rule}
	if len(hint) > 0 {
		r.Hint = hint[0]
	}
	return r
}

// The rules. Each refusal names one of these.
var (
	// Paths themselves.
	ErrNUL       = rule("nul-byte", "a path with a NUL byte")
	ErrDotDot    = rule("dot-dot", `a path with ".." in it names a folder by a detour`)
	ErrEmptyPath = rule("empty-path", "an empty path")
	ErrSymlink   = rule("symlink", "a path through a symbolic link: grant the real folder")
	ErrMissing   = rule("missing", "no such file or folder")
	ErrBadPath   = rule("bad-path", "a path that is neither absolute, ~-relative nor relative to the files folder")

	// Folders a grant may not write (Nothing it writes can widen the sandbox).
	ErrHomeFolder   = rule("home-folder", "the home folder itself can't be written: its dot files run outside the sandbox")
	ErrHoldsHome    = rule("holds-home", "a folder holding the home folder can't be written")
	ErrDotFolder    = rule("dot-folder", "a dot folder of the home folder (~/.config, ~/.local, ~/.ssh, ...) can't be written: what is there runs outside the sandbox")
	ErrLaunchAgents = rule("launch-agents", "~/Library/LaunchAgents can't be written: what is there runs outside the sandbox")
	ErrLinkSettings = rule("link-settings", "Link's settings (~/.lnk) are never granted")
	ErrLinkOwn      = rule("link-own", "Link's own folder (~/Link outside the agent's own) is never written")
	ErrOtherAgent   = rule("other-agent", "another agent's folder is never granted")
	ErrOwnAgentDir  = rule("own-agent-folder", "the agent's own folder outside its Home (its settings, memory and jobs) is never granted")
	ErrHarnessHome  = rule("harness-home", "a harness's home is never granted: no harness reaches another's")
	ErrLooseHome    = rule("loose-harness-home", "a harness's home is the owner's alone (mode 700): one another user owns or may open is never run in")
	ErrHidden       = rule("hidden", "~/Link/History and ~/Link/Teams stay hidden; a team's folder is granted only as [teams.<team>]")
	ErrOnPath       = rule("on-path", "a folder on the owner's PATH (or holding one) can't be written: what is put there runs outside the sandbox")
	ErrSessionDir   = rule("session-sockets", "the session's runtime folder (/run/user/<uid>: systemd, D-Bus, the ssh agent) is never granted")
	ErrHoldsHidden  = rule("holds-hidden", "a written folder can't hold Link's settings or other agents' folders")

	// How the grants fit together.
	ErrReadInsideWrite = rule("read-inside-write", "a read-only folder can't be inside a written one")
	ErrNestedLink      = rule("nested-link", "a .git, .envrc, .vscode or .idea inside a written folder is a link (or neither a file nor a folder), which the sandbox can keep read-only only as a file or folder")
	ErrNestedOutside   = rule("nested-outside", "a [files] read_only path is a .git, .envrc, .vscode or .idea below the top of a written folder, and not inside another")
	ErrScanBound       = rule("scan-incomplete", "the written folder could not be scanned for repositories within the scan's bounds (time, folders, count) or a folder of it could not be read")

	// Names.
	ErrBadName       = rule("bad-name", "a name is letters, digits, '-', '_' and '.' only, at most 64")
	ErrBadToolName   = rule("bad-tool-name", "a tool's name is letters, digits, - and _, at most 61, starting with a letter or digit, with no -- or __ and ending in neither - nor _ (internal/toolname: what a provider takes, with room for __<call>)")
	ErrBadModel      = rule("bad-model", "a model's name is 1 to 256 bytes of printable ASCII without a space (internal/toolname)")
	ErrNamespaceName = rule("namespace-name", "a namespace's name (task, tool, file, agent) is Link's and no grant takes it")
	ErrOwnTool       = rule("link-tool", "Link's own tools (memory-<id>, scheduler-<id>, run-<id>, file-<id>) are handed only to their agent's harness")
	ErrStrangerTool  = rule("stranger-tool", "a stranger's message can't be given the scheduler or run: through them the agent acts as itself")
	ErrStrangerNone  = rule("stranger-unknown-tool", "[tools] strangers names only a tool the agent has: Link's file or memory, or one [tools.grant] grants")
	ErrHarnessOnly   = rule("agent-only", "only the agent's own spec sets [tools] strangers, [tool.*] limits and [run]")
	ErrBadAsk        = rule("bad-ask", `a tool's ask is "none" or left out`)
	ErrBadCommand    = rule("bad-command", "a command is *, a program's name, or its absolute path")
	ErrBadHost       = rule("bad-host", "a host is a DNS name or an IP address, optionally with a leading *.")
	ErrBadPort       = rule("bad-port", "a port is 1-65535, or * with [network] mode = \"host\"")
	ErrAllPorts      = rule("all-ports-without-host", `[localhost] ports = ["*"] only with [network] mode = "host": behind its proxy every port would be other agents' proxies too`)
	ErrBadMode       = rule("bad-network-mode", `[network] mode is "host" or empty`)
	ErrBadLimit      = rule("bad-limit", "a limit is a positive number, or a duration such as 90s or 2m")
	ErrNotEnforced   = rule("not-enforced-yet", "nothing enforces this grant yet, so it is not given: lnk agent show --permissions marks what isn't")
	ErrDenyInternet  = rule("deny-internet-false", "deny --internet turns the internet off; deny --internet=false would turn it on, which only allow does")

	// Files.
	ErrSpecLink       = rule("spec-link", "a spec file that is a symbolic link is refused")
	ErrSpecNotRegular = rule("spec-not-regular", "a spec file that is not a regular file is refused")
	ErrSpecSyntax     = rule("spec-syntax", "not a valid TOML spec")
	ErrSpecUnknownKey = rule("spec-unknown-key", "an unknown key in a spec")
	ErrSpecWrongType  = rule("spec-wrong-type", "a key with the wrong type in a spec")
	ErrSpecTooBig     = rule("spec-too-big", "a spec file too big")

	// Agents.
	ErrAgentExists   = rule("agent-exists", "an agent of that name already exists")
	ErrAgentFile     = rule("agent-file", "an agent's folder holds another agent's agent.toml, or one whose id is not 32 lowercase hex digits")
	ErrHeldByHarness = rule("held-by-harness", "the harness's grant still holds it")
	// ErrLayout (layout_check.go), ErrMachineFile (machine.go),
	// ErrMovedAway and ErrDuplicateID (moved.go) are
	// declared beside what they check.
)

// AllRules lists every rule's sentinel, for documentation and for the
// test that each has a case.
var AllRules = []*Refusal{
	ErrNUL, ErrDotDot, ErrEmptyPath, ErrSymlink, ErrMissing, ErrBadPath,
	ErrHomeFolder, ErrHoldsHome, ErrDotFolder, ErrLaunchAgents, ErrLinkSettings,
	ErrLinkOwn, ErrOtherAgent, ErrOwnAgentDir, ErrHarnessHome, ErrLooseHome, ErrHidden,
	ErrHoldsHidden, ErrOnPath, ErrSessionDir, ErrReadInsideWrite, ErrNestedLink, ErrNestedOutside, ErrScanBound, ErrBadName, ErrNamespaceName, ErrOwnTool,
	ErrStrangerTool, ErrStrangerNone, ErrHarnessOnly, ErrBadAsk, ErrBadCommand, ErrBadHost,
	ErrBadPort, ErrAllPorts, ErrBadMode, ErrBadLimit, ErrNotEnforced, ErrDenyInternet, ErrSpecLink,
	ErrSpecNotRegular, ErrSpecSyntax, ErrSpecUnknownKey, ErrSpecWrongType,
	ErrSpecTooBig, ErrAgentExists, ErrAgentFile, ErrHeldByHarness, ErrLayout, ErrMachineFile,
	ErrMovedAway, ErrDuplicateID,
}
