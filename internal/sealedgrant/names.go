package sealedgrant

import "strings"

// Kinds of an agent's own secrets, as the spec names them.
const (
	ModelKey         = "MODEL_KEY"
	TelegramBotToken = "TELEGRAM_BOT_TOKEN"
)

// AgentSecretName is the name of agent's secret of kind:
// AGENT_<AGENT>_<KIND>, the agent's name upper-cased with every character
// but a letter or digit made _ (agent "my-bot", ModelKey →
// AGENT_MY_BOT_MODEL_KEY). The name only finds the secret; it is granted
// by the agent's ID.
func AgentSecretName(agent, kind string) string {
	var b strings.Builder
	b.WriteString("AGENT_")
	for _, r := range strings.ToUpper(agent) {
		if (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	b.WriteString("_" + kind)
	return b.String()
}
