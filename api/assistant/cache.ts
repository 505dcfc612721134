/**
 * What the assistant remembers between two messages of a conversation, in memory only: the
 * command still waiting for a missing or ambiguous parameter, so "из dev в prod" completes
 * "перенеси дашборд 5". Bounded in size and time; deleting the conversation forgets it.
 */
const TTL_MS = 10 * 60_000;
const MAX_ENTRIES = 10_000;

export class ConversationMemory {
  private readonly pending = new Map<string, { text: string; at: number }>();

  remember(conversationId: string, text: string): void {
    this.pending.delete(conversationId);
    this.pending.set(conversationId, { text, at: Date.now() });
    while (this.pending.size > MAX_ENTRIES) this.pending.delete(this.pending.keys().next().value!);
  }

  recall(conversationId: string): string | undefined {
    const p = this.pending.get(conversationId);
    if (!p) return undefined;
    if (Date.now() - p.at > TTL_MS) {
      this.pending.delete(conversationId);
      return undefined;
    }
    return p.text;
  }

  forget(conversationId: string): void {
    this.pending.delete(conversationId);
  }

  has(conversationId: string): boolean {
    return this.pending.has(conversationId);
  }
}
