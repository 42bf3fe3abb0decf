// Package sealedgrant is what lnk-keybroker and lnk-netbroker share of a
// sealed secret, and nothing of either broker: where its value may be
// added ([Seal]: one host, and the request headers that host
// authenticates with, checked by [CheckHeader]), the name of an agent's
// own secret ([AgentSecretName]), and the channel on which the netbroker
// asks the keybroker for one — its request and reply ([SpecSealedSecret])
// and the netbroker's side of it, [NetClient].
//
// The keybroker's server (helpers/keybroker) and its secrets file
// (helpers/keybroker/secrets, with its TOML parser) import this package;
// the netbroker imports only this one, so lnk-netbroker links neither.
//
// # Security
//
// A [NetClient] trusts the keybroker for a value and its seal, and
// checks what it can: the value comes in a memfd sealed against change,
// of at most 64 KiB, with at least one header named; the netbroker then
// checks each header with [CheckHeader] before it adds the value.
package sealedgrant
