//go:build !lnkattack

package main

import "lnk.dev/lnk/helpers/netbroker"

// attack does nothing: only a test's build (-tags lnkattack,
// attack_lnkattack.go) runs an attacker inside the confined broker.
func attack(string, *netbroker.SealedOptions) {}

// prepareAttack does nothing either.
func prepareAttack(string) {}
