enum PhonePlaceholder {}
