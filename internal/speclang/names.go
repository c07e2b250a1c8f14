package speclang

import (
	"go/token"
	"strings"
	"unicode"
)

// initialisms are written in capitals in Go names (DeviceID, not DeviceId),
// as golint and sqlc do.
var initialisms = map[string]bool{
	"ACL": true, "API": true, "CO2": true, "CPU": true, "DNS": true, "GPS": true,
	"GPU": true, "HTTP": true, "ID": true, "IP": true, "JSON": true, "PH": true,
	"RPM": true, "SLA": true, "UI": true, "URL": true, "UTC": true, "UUID": true,
	"HVAC": true, "IO": true, "OS": true, "PV": true, "SOC": true, "TTL": true,
}

// GoName converts a snake_case spec name to an exported Go identifier.
func GoName(snake string) string {
	var b strings.Builder
	for _, part := range strings.Split(snake, "_") {
		if part == "" {
			continue
		}
		if up := strings.ToUpper(part); initialisms[up] {
			b.WriteString(up)
			continue
		}
		r := []rune(part)
		r[0] = unicode.ToUpper(r[0])
		b.WriteString(string(r))
	}
	return b.String()
}

// valueGoName is the Go name an enum value gives its constant after the
// type's name: on_route becomes OnRoute, 1080p stays 1080p; any rune a Go
// identifier cannot hold separates words, as an underscore does.
func valueGoName(v string) string {
	clean := strings.Map(func(r rune) rune {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			return r
		}
		return '_'
	}, v)
	return GoName(clean)
}

// validGoIdent reports whether s can name an exported Go identifier.
func validGoIdent(s string) bool {
	if s == "" || token.IsKeyword(s) || !token.IsIdentifier(s) {
		return false
	}
	return unicode.IsUpper([]rune(s)[0])
}

// reservedGoNames are the package-level identifiers every generated domain
// package declares whatever its spec says; a Go name derived from the spec
// must not be one of them. The unexported ones cannot collide with a spec
// name today but are listed so that the list is the whole fixed set:
// generator's TestReservedNamesCoverGeneratedPackage parses the golden
// package and fails when it declares a fixed name missing here.
var reservedGoNames = map[string]bool{
	"Store": true, "NewStore": true, "NewServer": true, "Domain": true,
	"Operations": true, "Tools": true, "snapshot": true, "description": true,
}

// reservedStoreMethods are the methods every generated Store has besides
// one per operation; an operation's Go name must not be one of them.
var reservedStoreMethods = map[string]bool{
	"Reset": true, "reset": true, "Snapshot": true, "Call": true, "Clone": true, "CloneStore": true,
	"clone": true, "adopt": true, // a domain with workflows
}

// ReservedGoName reports whether every generated domain package declares
// name at package level itself.
func ReservedGoName(name string) bool { return reservedGoNames[name] }

// ReservedStoreMethod reports whether every generated Store has a method
// called name that is not an operation.
func ReservedStoreMethod(name string) bool { return reservedStoreMethods[name] }
