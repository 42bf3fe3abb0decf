// Package tooldef is a tool's definition: ~/.lnk/sandbox/tools/<name>.json
// (0600 in a 0700 folder), the command Link runs outside every sandbox, a
// snapshot of the few variables of the owner's environment it runs with,
// and --env values, which may hold a token.
//
// Every value of a tool's environment is held as a secret.Value once
// read (never printed, zeroed when dropped), written as it is only in the
// definition file, and handed to the tool's server alone, in its
// environment. A definition with any field but those Link writes is
// refused, and so is one that is a link or not a regular file: the file is
// read and written through the resolver, from a handle on HOME, never
// through a link.
//
// A tool runs in /, never the folder it was added in (which a sandbox may
// write): an argument written from there (".", "./…", "../…") is refused.
//
// # Security
//
// Holds: one definition's values while a caller uses them. Trusts: the
// owner, who adds tools. Refuses: an unknown field, a bad name, a relative
// argument, a link where the file or a folder on the way should be, and a
// --url that is neither https:// nor http:// to this machine.
package tooldef
