#pragma once
/// "Did you mean ...?" for unknown names: nearest candidate by edit distance.

#include <string>
#include <vector>

namespace clustersim {

/// Index of the first byte where `s` stops being valid UTF-8, or npos.
std::size_t invalid_utf8_at(const std::string& s);

/// `s` made printable on one line: control characters as \n, \r, \t or \xNN, bytes that are
/// not UTF-8 as \xNN, so an error message never spans lines or stops at a NUL.
/// The marker of a zero-width character (a byte order mark U+FEFF, U+200B-U+200D, U+2060)
/// given its three UTF-8 bytes, else nullptr.
const char* invisible(const std::string& three);
/// `s` without its zero-width characters.
std::string without_invisible(const std::string& s);
std::string printable(const std::string& s);

/// Levenshtein distance between two strings (case-sensitive).
std::size_t edit_distance(const std::string& a, const std::string& b);

/// The candidate nearest to `word`, or "" when none is close enough to be a plausible typo
/// (distance above max(2, |word|/3)). Ties go to the first candidate in the list.
std::string nearest(const std::string& word, const std::vector<std::string>& candidates);

/// "a, b, c" — candidates joined for the `valid:` part of a message.
std::string join(const std::vector<std::string>& items, const std::string& sep = ", ");

/// "unknown KIND 'word'; did you mean 'x'?" (the suggestion only when one is close).
/// `context` (may be empty) is inserted after the name: "unknown key 'tpp' in training; ...".
std::string unknown_name(const std::string& kind, const std::string& word, const std::vector<std::string>& candidates,
                         const std::string& context = "");

} // namespace clustersim
