/* test_base.c: status codes: every value has its own message, out-of-range values are handled. */
#include "test.h"

static void every_status_has_a_distinct_message(void **state)
{
    (void)state;
    for (int i = 0; i < KCC_STATUS_COUNT; ++i) {
        const char *a = kcc_status_str((kcc_status)i);
        assert_non_null(a);
        assert_string_not_equal(a, "unknown status");
        for (int j = 0; j < i; ++j)
            assert_string_not_equal(a, kcc_status_str((kcc_status)j));
    }
}

static void out_of_range_status_is_unknown_not_null(void **state)
{
    (void)state;
    assert_string_equal(kcc_status_str(KCC_STATUS_COUNT), "unknown status");
    assert_string_equal(kcc_status_str((kcc_status)-1), "unknown status");
    assert_string_equal(kcc_status_str((kcc_status)12345), "unknown status");
}

int test_group_base(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_status_has_a_distinct_message),
        cmocka_unit_test(out_of_range_status_is_unknown_not_null),
    };
    return KCC_RUN_GROUP("base", tests);
}
