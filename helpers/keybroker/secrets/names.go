package secrets

import "lnk.dev/lnk/internal/sealedgrant"

// Kinds of an agent's own secrets, as the spec names them (package
// sealedgrant, which the netbroker shares).
const (
	ModelKey         = sealedgrant.ModelKey
	TelegramBotToken = sealedgrant.TelegramBotToken
)

// AgentSecretName is the name of agent's secret of kind:
// AGENT_<AGENT>_<KIND> (sealedgrant.AgentSecretName).
func AgentSecretName(agent, kind string) string { return sealedgrant.AgentSecretName(agent, kind) }
