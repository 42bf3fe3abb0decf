package main

import (
	"strings"
	"testing"
)

// Each fd is named once, above 2, in the order the usage gives; anything
// else is refused before any fd is touched.
func TestArgumentsRefused(t *testing.T) {
	for _, args := range [][]string{
		nil,
		{"--plan-fd"},
		{"--plan-fd", "2"},
		{"--plan-fd", "x"},
		{"--relay-fd", "4"},
		{"--plan-fd", "3", "--plan-fd", "4"},
		{"--plan-fd", "3", "--relay-fd", "3"},
		{"--plan-fd", "3", "--lifeline-fd", "5", "--relay-fd", "4"},
		{"--plan-fd", "3", "--relay-fd"},
		{"relay", "/run/lnk/proxy.sock"},
		{"--plan-fd", "3", "extra"},
	} {
		err := run(args)
		if err == nil || !strings.Contains(err.Error(), "usage") && !strings.Contains(err.Error(), "bad --") {
			t.Errorf("%q: %v, want a refusal naming the usage or the bad fd", args, err)
		}
	}
}
