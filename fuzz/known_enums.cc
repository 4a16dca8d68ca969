#include "fuzz/known_enums.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "google/protobuf/descriptor.h"

namespace zosched {

std::string FirstUnknownEnum(const google::protobuf::Message& message) {
  using google::protobuf::FieldDescriptor;
  const google::protobuf::Reflection* reflection = message.GetReflection();
  std::vector<const FieldDescriptor*> fields;
  reflection->ListFields(message, &fields);
  for (const FieldDescriptor* field : fields) {
    const int n = field->is_repeated() ? reflection->FieldSize(message, field) : 1;
    for (int i = 0; i < n; ++i) {
      const std::string path =
          field->is_repeated() ? absl::StrCat(field->name(), "[", i, "]") : field->name();
      if (field->cpp_type() == FieldDescriptor::CPPTYPE_ENUM) {
        const int value = field->is_repeated()
                              ? reflection->GetRepeatedEnumValue(message, field, i)
                              : reflection->GetEnumValue(message, field);
        if (field->enum_type()->FindValueByNumber(value) == nullptr) return path;
      } else if (field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
        const google::protobuf::Message& sub =
            field->is_repeated() ? reflection->GetRepeatedMessage(message, field, i)
                                 : reflection->GetMessage(message, field);
        const std::string inner = FirstUnknownEnum(sub);
        if (!inner.empty()) return absl::StrCat(path, ".", inner);
      }
    }
  }
  return "";
}

}  // namespace zosched
