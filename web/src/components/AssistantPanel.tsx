export function AssistantPanel() { return null; }
