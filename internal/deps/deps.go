//go:build lnkdeps

// Package deps pins the modules Link's parts import, so that go.mod and
// go.sum hold them before the code that needs them lands. It is never built.
package deps

import (
	_ "filippo.io/age"
	_ "github.com/BurntSushi/toml"
	_ "github.com/c2sp/wycheproof"
	_ "github.com/cloudflare/circl/hpke"
	_ "github.com/cyphar/filepath-securejoin"
	_ "github.com/modelcontextprotocol/go-sdk/mcp"
	_ "github.com/seccomp/libseccomp-golang"
	_ "github.com/spf13/cobra"
	_ "golang.org/x/sys/unix"
)
