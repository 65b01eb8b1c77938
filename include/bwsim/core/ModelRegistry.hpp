#pragma once
// Named implementations of a replaceable model, as Ramulator 2.0 names its: a config key or a
// kernel argument chooses one by name, and the registry builds it. Each registry is one explicit
// list (no self-registration from static initializers, which a static library would drop). An
// unknown name raises `Error` listing the valid ones.
#include <fmt/format.h>

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace bwsim {

template <class Error, class Product, class... Args>
class ModelRegistry {
 public:
  using Factory = Product (*)(Args...);
  struct Model {
    std::string_view name;
    std::string_view description;
    Factory make;
  };

  // `setting`: where the name is chosen ("l2.policy", "--tile-scheduler"), for messages.
  ModelRegistry(std::string_view setting, std::vector<Model> models) : setting_(setting), models_(std::move(models)) {}

  // The model called `name`; `origin` (a config file, may be empty) prefixes the error.
  const Model& at(std::string_view name, std::string_view origin = {}) const {
    for (const Model& m : models_)
      if (m.name == name) return m;
    throw Error(fmt::format("{}{}{}: unknown model '{}'; the valid names are {}", origin, origin.empty() ? "" : ": ",
                            setting_, name, names()));
  }
  std::string names() const {
    std::string out;
    for (const Model& m : models_) out += fmt::format("{}{}", out.empty() ? "" : ", ", m.name);
    return out;
  }
  std::string_view setting() const { return setting_; }
  const std::vector<Model>& models() const { return models_; }

 private:
  std::string_view setting_;
  std::vector<Model> models_;
};

}  // namespace bwsim
