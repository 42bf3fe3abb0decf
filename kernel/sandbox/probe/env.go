package probe

import (
	"os"
	"strings"
)

// DocumentedEnv is the sandbox's whole environment as SECURITY.md
// documents it ("The environment is cleared to …"), written out here
// rather than taken from what the sandbox was built with, so the probe
// checks the sandbox against the document, never against itself
// (TestDocumentedEnvIsSecurityMDs holds the two together).
var DocumentedEnv = []string{
	"PATH", "HOME", "PWD", "USER", "LOGNAME", "SHELL", "TMPDIR", "LNK_SANDBOX", "LNK_PORT",
	"TERM", "COLORTERM", "NO_COLOR", "LANG", "LC_ALL", "LC_CTYPE", "TZ",
}

// ProxyEnv are the proxy variables, set only with a relay.
var ProxyEnv = []string{"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"}

// allowedEnv is what the environment probe allows: DocumentedEnv, and
// ProxyEnv with a relay. The check gives the sandbox no tool bridge and
// no sealed secrets, so no LNK_TOOL_* or sealed variable is allowed.
func allowedEnv(h Host) []string {
	allowed := append([]string(nil), DocumentedEnv...)
	if h.RelayPort != 0 {
		allowed = append(allowed, ProxyEnv...)
	}
	return allowed
}

// envVerdict: Open, naming them, if the environment holds any variable
// outside the comma-separated list allowed.
func envVerdict(allowed string) (string, string) {
	ok := map[string]bool{}
	for _, k := range strings.Split(allowed, ",") {
		ok[k] = true
	}
	var extra []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if !ok[k] {
			extra = append(extra, k)
		}
	}
	if len(extra) > 0 {
		return Open, strings.Join(extra, ", ")
	}
	return Closed, ""
}
