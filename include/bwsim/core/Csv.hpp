#pragma once
// The calibration CSVs: '#' comment lines, one header line, then rows of comma-separated fields.
#include <cstddef>
#include <string>
#include <vector>

namespace bwsim {

// The header's fields (empty if the file has none).
std::vector<std::string> read_csv_header(const std::string& path);
// The rows after the header, `fields` fields each (the last keeps any further commas), each with
// "path:line" appended as one more field for messages. InputError if unreadable or short.
std::vector<std::vector<std::string>> read_csv_rows(const std::string& path, std::size_t fields);

}  // namespace bwsim
