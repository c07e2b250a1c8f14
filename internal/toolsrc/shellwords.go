package toolsrc

import (
	"fmt"
	"strings"
)

// SplitCommand splits a command line into words the way a POSIX shell
// would, without running one: blanks separate words; single quotes keep
// everything literally; double quotes keep blanks, and a backslash in them
// escapes only $ ` " \ and a newline; a backslash outside quotes escapes
// the next character. No expansion, globbing or redirection happens, so
// what the user wrote is what is run.
func SplitCommand(line string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	rs := []rune(line)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case r == ' ' || r == '\t' || r == '\n':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case r == '\\':
			inWord = true
			if i+1 < len(rs) {
				i++
				if rs[i] != '\n' { // a backslash-newline joins lines
					cur.WriteRune(rs[i])
				}
			}
		case r == '\'':
			inWord = true
			end := indexRune(rs, i+1, '\'')
			if end < 0 {
				return nil, fmt.Errorf("command %q: found an unclosed single quote at character %d; expected a closing '", line, i+1)
			}
			cur.WriteString(string(rs[i+1 : end]))
			i = end
		case r == '"':
			inWord = true
			j := i + 1
			for ; j < len(rs) && rs[j] != '"'; j++ {
				if rs[j] == '\\' && j+1 < len(rs) && strings.ContainsRune("$`\"\\\n", rs[j+1]) {
					j++
					if rs[j] != '\n' {
						cur.WriteRune(rs[j])
					}
					continue
				}
				cur.WriteRune(rs[j])
			}
			if j >= len(rs) {
				return nil, fmt.Errorf("command %q: found an unclosed double quote at character %d; expected a closing \"", line, i+1)
			}
			i = j
		default:
			inWord = true
			cur.WriteRune(r)
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	if len(words) == 0 {
		return nil, fmt.Errorf("command %q: found no program to run", line)
	}
	return words, nil
}

func indexRune(rs []rune, from int, r rune) int {
	for i := from; i < len(rs); i++ {
		if rs[i] == r {
			return i
		}
	}
	return -1
}
