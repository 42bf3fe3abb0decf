// Package toolname is the one rule for the name of a tool and of a
// model, as every layer that takes one checks it: Link Harness before it
// offers a tool (services/harness/tools) or keeps a subagent's list
// (services/harness/endpoint, services/harness/store), the scheduler
// before it writes a subagent's start (services/scheduler, and
// internal/linkmeta reading the parent's list from a call's _meta), the
// way in before it hands a start on (services/wayin), and the built-in
// model's endpoint reading a request's functions (services/harness/
// builtin: MaxOffered and ProviderChars). A name one of them
// would refuse is refused by each, where it is first taken, so nothing
// is accepted that fails later.
//
// # Security
//
// Names come from the agent's model (start_subagent's arguments) and
// from other processes (the way in's callers): untrusted text. A tool's
// name is what a provider takes (OpenAI's and Anthropic's
// [A-Za-z0-9_-]{1,64}) with room left for the "__" and the call's name
// Link Harness joins to it; it starts with a letter or a digit and holds
// no "--" or "__" and ends with neither '-' nor '_', so an offered
// <tool>__<call> splits back one way only. A model's name is 1 to 256
// bytes of printable ASCII without a space: it travels in an HTTP header
// (Link-Model) and a JSON file. A name that breaks a rule is refused,
// never cut or cleaned.
package toolname
