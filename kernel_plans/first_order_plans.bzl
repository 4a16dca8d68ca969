"""The first-order kernel plans (PyTorch eager's, Megatron-LM's): each one
library built from the pieces they share (gpt_first_order_op,
fused_attention_plan, embedding_backward_plan, multi_tensor_apply) and one
test, which lowers schedules with first_order_plan_for_test.h."""

_PLAN_DEPS = [
    ":embedding_backward_plan",
    ":fused_attention_plan",
    ":gpt_first_order_op",
    ":kernel",
    ":multi_tensor_apply",
    "//models:model_proto",
    "//schedule:schedule_proto",
    "//third_party:absl",
]

_TEST_DEPS = [
    ":first_order_plan_for_test",
    ":kernel",
    ":profile_plan",
    ":pytorch_first_order_plan",
    "//models:model_proto",
    "//models:zoo_model_for_test",
    "//schedule:schedule_proto",
    "//third_party:absl",
    "//third_party:gtest_main",
]

def first_order_plan(name):
    """cc_library `name` (name.cc, name.h) and cc_test `name`_test, which
    may read PyTorch eager's plan and profile_plan beside its own."""
    own = ":" + name
    native.cc_library(
        name = name,
        srcs = [name + ".cc"],
        hdrs = [name + ".h"],
        deps = _PLAN_DEPS,
    )
    native.cc_test(
        name = name + "_test",
        size = "small",
        srcs = [name + "_test.cc"],
        deps = _TEST_DEPS + ([] if own in _TEST_DEPS else [own]),
    )
