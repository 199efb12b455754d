import Messaging

extension Channel: StoredValue {}
