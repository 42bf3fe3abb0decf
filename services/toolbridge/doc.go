// Package toolbridge runs the MCP tools an owner added outside every
// sandbox and relays a sandbox's calls to them (tools-and-asking.txt,
// "Tools that run outside" through "A tool at a URL").
//
// The definitions live in tooldef; the bridge, its sessions and what it
// rewrites between client and server grow here.
//
// # Security
//
// Holds: the tools' definitions (read outside every sandbox, never
// through a link), their --env values as secrets, and one server process
// per session. Trusts: the owner's definitions. Never trusts: a sandbox's
// requests, or a server's answers, which are passed on as untrusted text
// (as the server wrote them, but for the id). Refuses: a call whose name,
// arguments or uri is written twice or in another case, which a server
// could read as another call than the one judged.
//
// For an agent's start it runs confined in a process of its own
// (cmd/lnk-toolbridge, the kernel's child), and starts no server itself:
// [KernelChannel] asks the kernel, which starts them through the one
// launcher (package launch, wired into the kernel by package
// kernelstart). For a run of flag grants it still runs in lnk, and
// starts its servers itself.
//
// A sandbox's requests reach it through its proxy, which passes each
// one's connection on a channel the bridge made ([Running.ProxyChannel],
// internal/connpass): the bridge reads the rest of the request from the
// client's own connection and answers on it. What comes on that channel
// without exactly one connected stream socket is refused and logged, and
// at most [MaxPassed] such connections are served at once.
package toolbridge
