// Package models holds one package per model API, each with the test
// double its callers share (inspect_ai's model/_providers): ollama, the
// Ollama client the agent loop, the synthesizer and the judge all use,
// with ollama/ollamatest as its wire-format double; and openai, the client
// of OpenAI-compatible Chat Completions endpoints (vLLM, SGLang,
// llama.cpp, ...) the agent loop uses, with openai/openaitest as its.
//
// Providers import neither harness nor scenarios; they import providers.
package models
