// Package namespace exposes existing local MCP servers (tool definitions,
// its providers) as one namespace, through a private definition the host
// writes (tools-and-asking.txt "Namespace servers" through "Argument
// checks").
//
// The host chooses every action's targets; a caller gives arguments and a
// kind, never a server's name or address. An action with several targets
// requires kind, unless the host marks it a broadcast read, whose results
// are joined under each target's kind; a mutation selects one target and
// keeps that server's own tool name. An action is offered as one object
// schema (every target's properties, kind naming each target, required
// only what every target requires); each call is still checked against
// its chosen target's own discovered schema.
//
// # Security
//
// Holds: the host's definition, the providers' discovered schemas, and
// one session per provider it started. May: start a provider's command
// with Link's filtered environment (credential-named variables removed,
// the provider's own --env kept). Trusts: the host's definition and the
// owner's provider definitions, reloaded at every call. Refuses, before
// forwarding or approval: a field the target's schema does not list, a
// missing kind where one is needed, a kind naming no target, arguments
// over the bridge's cap; and, at the call, a removed provider or a
// closed namespace. A provider whose launch changed gets a fresh session.
// Never trusts: a caller's arguments, or a provider's answers (passed on
// as they are, capped).
package namespace
