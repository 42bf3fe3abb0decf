package secrets

import (
	"errors"
	"strings"
	"testing"

	"lnk.dev/lnk/internal/secret"
)

const agentA = "0123456789abcdef0123456789abcdef"
const agentB = "fedcba9876543210fedcba9876543210"

func TestParseRefusals(t *testing.T) {
	cases := map[string]string{
		"unknown key":      "[secrets.A]\nvalue = \"x\"\nagents = []\nextra = 1\n",
		"unknown table":    "[other]\nx = 1\n",
		"lower-case name":  "[secrets.model_key]\nvalue = \"x\"\n",
		"name with dot":    "[secrets.\"A.B\"]\nvalue = \"x\"\n",
		"no value":         "[secrets.A]\nagents = []\n",
		"empty value":      "[secrets.A]\nvalue = \"\"\n",
		"value not string": "[secrets.A]\nvalue = 12\n",
		"bad agent id":     "[secrets.A]\nvalue = \"x\"\nagents = [\"main\"]\n",
		"agent twice":      "[secrets.A]\nvalue = \"x\"\nagents = [\"" + agentA + "\", \"" + agentA + "\"]\n",
		"bad host":         "[secrets.A]\nvalue = \"x\"\ninternet_host = \"http://x.com/\"\n",
		"host no dot":      "[secrets.A]\nvalue = \"x\"\ninternet_host = \"localhost\"\n",
		"not toml":         "[secrets.A\nvalue = \"sk-LEAKME\"\n",
		"bad escape":       "[secrets.A]\nvalue = \"sk-LEAKME\\q\"\n",
		"value too long":   "[secrets.A]\nvalue = \"" + strings.Repeat("x", MaxValueSize+1) + "\"\n",
	}
	for name, text := range cases {
		t.Run(name, func(t *testing.T) {
			f, err := Parse([]byte(text))
			if err == nil {
				f.Destroy()
				t.Fatal("accepted")
			}
			if strings.Contains(err.Error(), "LEAKME") || strings.Contains(err.Error(), "\n") {
				t.Fatalf("refusal shows the value or spans lines: %v", err)
			}
		})
	}
}

func TestEncodeParseRoundTrip(t *testing.T) {
	values := []string{"sk-plain", `quote " and back\slash`, "tab\tnew\nline\x00nul\x7f", "ünïcödé ✓", "'single' \"\"\" triple"}
	f := &File{Secrets: map[string]*Entry{}}
	for i, v := range values {
		sv, _ := secret.FromString(v)
		e := &Entry{Value: sv, Agents: []string{agentA}}
		if i%2 == 1 {
			e.InternetHost = "api.example.com"
			e.Agents = []string{agentA, agentB}
		}
		f.Secrets["S"+string(rune('A'+i))] = e
	}
	data := f.Encode()
	back, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	defer back.Destroy()
	for i, v := range values {
		e := back.Secrets["S"+string(rune('A'+i))]
		if e == nil || string(e.Value.Bytes()) != v {
			t.Fatalf("value %d changed through the file", i)
		}
		if e.Sealed() != (i%2 == 1) || !e.GrantedTo(agentA) || e.GrantedTo(agentB) != (i%2 == 1) {
			t.Fatalf("entry %d changed through the file: %+v", i, e)
		}
	}
	for _, b := range data {
		if b != 0 {
			t.Fatal("Parse left the file's bytes in place")
		}
	}
}

func TestNamesAndChecks(t *testing.T) {
	for _, ok := range []string{"AGENT_MAIN_MODEL_KEY", "AGENT_MAIN_TELEGRAM_BOT_TOKEN", "A", "GITHUB_TOKEN2"} {
		if err := CheckName(ok); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "1A", "_A", "a", "A-B", "A B", strings.Repeat("A", 129)} {
		if err := CheckName(bad); !errors.Is(err, ErrSyntax) {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestAgentSecretName(t *testing.T) {
	for agent, want := range map[string]string{"main": "AGENT_MAIN_MODEL_KEY", "my-bot.2": "AGENT_MY_BOT_2_MODEL_KEY"} {
		got := AgentSecretName(agent, ModelKey)
		if got != want || CheckName(got) != nil {
			t.Errorf("%s: %s, want %s", agent, got, want)
		}
	}
	if got := AgentSecretName("main", TelegramBotToken); got != "AGENT_MAIN_TELEGRAM_BOT_TOKEN" {
		t.Errorf("telegram: %s", got)
	}
}
