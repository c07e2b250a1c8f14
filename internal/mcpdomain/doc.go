// Package mcpdomain is the runtime of the domains granite-gen generates. It
// has two kinds of user:
//
//   - generated code, which links against it for the in-memory table behind
//     each entity, the result shapes of the operation kinds, argument
//     validation with sentences a model can act on, the interpreter of a
//     workflow's generated step table (RunWorkflow), and the plumbing that
//     turns a generated tool into an mcp-go handler;
//   - the rest of the module, which reads and serves a generated domain
//     through its registry entry (Domain, with its Tools, Operations and
//     Store), decodes a store's snapshot (Rows), and keeps the bounds the
//     generated tools keep (MaxResultBytes, Clip) when it relays or serves
//     tools of its own.
//
// It knows nothing about any domain. Everything domain-specific is generated
// under gen/ from the specs. Levels are package level's and operation kinds
// package opkind's, so that the spec language names them without linking
// this runtime and mcp-go's server.
package mcpdomain
