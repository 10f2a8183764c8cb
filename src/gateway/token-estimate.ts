/** A rough tokenizer: about four characters of English or code per token, as OpenAI's guidance puts it. */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

/** Prompt tokens of a chat request: each message's text plus the few tokens of framing each carries. */
export function estimatePromptTokens(messageTexts: readonly string[]): number {
  return messageTexts.reduce((total, text) => total + 4 + estimateTokens(text), 3);
}
