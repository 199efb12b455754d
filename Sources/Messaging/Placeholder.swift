enum MessagingPlaceholder {}
