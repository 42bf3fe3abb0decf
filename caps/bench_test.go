package caps

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/BurntSushi/toml"

	"lnk.dev/lnk/internal/testenv"
)

// BenchmarkCompileAgent times loading and compiling an agent's grants
// (strict parse, every rule, each path resolved without links) beside
// the baseline of reading the same file and decoding it with no checks.
func BenchmarkCompileAgent(b *testing.B) {
	home := testenv.Home(b)
	CreateAgent(home, "bench")
	for _, d := range []string{"P/a", "P/b", "R"} {
		os.MkdirAll(filepath.Join(home, d), 0o700)
	}
	if _, err := Allow(home, "bench", Grants{Write: []string{"~/P/a", "~/P/b"}, Read: []string{"~/R"},
		InternetHosts: []string{"api.example.com", "github.com"}, Ports: []string{"8080"}, Tool: "gh", ToolAllow: []string{"search"}}); err != nil {
		b.Fatal(err)
	}
	file := Layout{Home: home}.SandboxFile("bench")
	const rounds = 2000
	start := time.Now()
	for i := 0; i < rounds; i++ {
		data, err := os.ReadFile(file)
		if err != nil {
			b.Fatal(err)
		}
		var s Spec
		if _, err := toml.Decode(string(data), &s); err != nil {
			b.Fatal(err)
		}
	}
	baseNs := float64(time.Since(start).Nanoseconds()) / rounds
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := CompileAgent(home, "bench"); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	linkNs := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	b.ReportMetric(linkNs, "link-ns/op")
	b.ReportMetric(baseNs, "base-ns/op")
	b.ReportMetric(linkNs/baseNs, "x-baseline")
}
